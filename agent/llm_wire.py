"""What a borrowed model request carries both ways (agent/llm_borrow.py, agent/host/lending.py).

A process whose model library (litellm) is still loading has one request made by a warm session
host instead, exactly as it would have made it: the same code (`code_stamp`), the same variables
the library reads (`ambient_env`: compared by digest, so no key travels for the comparison), the
same fields of `agent.llm.LLM` (`call_of`). The reply comes back whole (`reply_to_wire`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

# What litellm and its HTTP client read from the environment: keys and endpoints of every
# provider, cloud credentials, proxies and CA bundles, litellm's own switches.
_AMBIENT = re.compile(r"(_API_KEY|_API_BASE|_BASE_URL|_API_VERSION|_PROXY)$"
                      r"|^(HF_TOKEN|HUGGINGFACE_|AWS_|AZURE_|VERTEX|GOOGLE_|GEMINI_|LITELLM_|OPENAI_|ANTHROPIC_|SSL_CERT|REQUESTS_CA_BUNDLE"
                      r"|CURL_CA_BUNDLE|HTTPX_|OLLAMA_)", re.IGNORECASE)
# the code that makes the request and reads the reply, in the host and in the client alike
_CODE = ("llm.py", "llm_errors.py", "llm_usage.py", "llm_requests.py", "llm_lean.py", "reasoning.py",
         "secrets.py", "llm_wire.py", "host/lending.py", "llm_borrow.py")
_SET_BY_US = {"LITELLM_LOCAL_MODEL_COST_MAP"}  # agent.llm.load_litellm sets it in every process that loads
CALL_FIELDS = ("model", "api_base", "api_key", "timeout", "key_variable", "reasoning", "max_tokens")


def ambient_env(env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """name -> digest of the value, for each variable the model library may read."""
    return {name: hashlib.sha256(value.encode(errors="replace")).hexdigest()[:32]
            for name, value in env.items() if _AMBIENT.search(name) and name not in _SET_BY_US}


def env_difference(theirs: dict[str, str]) -> list[str]:
    """The names whose values differ between this process and the digests `theirs` (sorted)."""
    mine = ambient_env(os.environ)
    return sorted(name for name in set(mine) | set(theirs) if mine.get(name) != theirs.get(name))


@functools.cache
def code_stamp() -> str:
    """This process's model-request code, as loaded: its version and its files' sizes and times
    (computed once: a host started before an upgrade keeps its old stamp)."""
    from agent import __version__

    root = Path(__file__).resolve().parent.parent
    parts = [__version__]
    for name in _CODE:
        try:
            info = (root / name).stat()
            parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:-")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def call_of(llm: Any) -> dict[str, Any]:
    return {name: getattr(llm, name) for name in CALL_FIELDS}


def reply_to_wire(reply: Any) -> dict[str, Any]:
    data = {f.name: getattr(reply, f.name) for f in fields(reply) if f.name not in ("thinking", "tool_calls")}
    data["tool_calls"] = [asdict(call) for call in reply.tool_calls]
    data["thinking_text"] = reply.thinking.text
    data["thinking_blocks"] = reply.thinking.blocks()
    return data


def reply_from_wire(data: dict[str, Any]) -> Any:
    from agent.llm import ModelReply, ToolCallRequest
    from agent.reasoning import ThinkingCollector

    values = dict(data)
    thinking = ThinkingCollector.restored(values.pop("thinking_text", ""), values.pop("thinking_blocks", []))
    calls = [ToolCallRequest(**call) for call in values.pop("tool_calls", [])]
    return ModelReply(**values, tool_calls=calls, thinking=thinking)
