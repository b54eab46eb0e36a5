"""A model request made by the warm session host while this process's model library still loads.

Importing litellm takes seconds (issue 22); a session host that runs has it loaded. Until the
import here finishes (agent/llm_preload.py), `agent.llm.LLM.complete` hands each request to the
host, which makes it with the same code, variables and fields (agent/llm_wire.py,
agent/host/lending.py) and streams the text back; the session, its tools and approvals stay here.
Whenever the host cannot (none runs, it is cold, another environment, another code version), the
request is made here, as before; so is every request to a provider whose credentials are more than
a key and an address (agent.config.Config.borrows). `CODER_TUI_HOST=off`, `host = "off"` and `--no-host` turn it off.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Callable
from typing import Any

from agent.llm_wire import ambient_env, call_of, code_stamp, reply_from_wire
from agent.hostplace import MAX_LINE, HostPlaceError, check_dir, socket_path

ENV_SETTING = "CODER_TUI_HOST"
FACTS_WAIT = 30.0  # seconds a question of model facts waits for the host
_state: dict[str, bool | None] = {"lent": None}  # the host's last answer: lent, refused, or not asked yet


def enabled() -> bool:
    return os.environ.get(ENV_SETTING, "").strip().lower() != "off"


def lending() -> bool:
    """The host lent the last request asked of it (the app's status bar need not say "loading")."""
    return bool(_state["lent"])


async def available() -> bool:
    """Whether a warm host would lend a request now (a probe: nothing is sent to a model)."""
    if not enabled():
        return False
    request = {"type": "model", "id": 1, "probe": True, "env": ambient_env(os.environ), "code": code_stamp()}
    opened = await _ask(request)
    if opened is not None:
        opened[2].close()
    return opened is not None


def borrowed_facts(model: str) -> Any:
    """agent.modelfacts.ModelFacts of `model` as the host's litellm reads them (None: it would not).
    Blocking, for a thread: asked the moment the app has read its config, the question travels
    while the interpreter is busy opening the session."""
    from agent.modelfacts import ModelFacts

    if not enabled():
        return None
    line = _line({"type": "model", "id": 1, "facts": True, "call": {"model": model},
                  "env": ambient_env(os.environ), "code": code_stamp()})
    if line is None:
        return None
    path = socket_path()
    try:
        check_dir(path.parent)
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(FACTS_WAIT)
            conn.connect(str(path))
            conn.sendall(line)
            with conn.makefile("rb") as reader:
                first = _first(reader.readline(MAX_LINE))
    except (OSError, HostPlaceError):
        first = _first(b"")
    try:
        return ModelFacts(**first["facts"]) if first.get("ok") else None
    except (KeyError, TypeError):
        return None


async def borrowed(llm: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   on_text: Callable[[str], None], on_reasoning: Callable[[str], None]) -> Any:
    """The ModelReply the host made for `llm`; None when it would not (then make it here).
    LLMError or agent.llm.Retryable as the request made here would raise them."""
    if not enabled():
        return None
    call = {**call_of(llm), "pid": os.getpid()}
    request = {"type": "model", "id": 1, "call": call, "messages": messages, "tools": tools,
               "env": ambient_env(os.environ), "code": code_stamp()}
    opened = await _ask(request)
    if opened is None:
        return None
    _first, reader, writer = opened
    try:
        return await _follow(reader, on_text, on_reasoning)
    finally:
        writer.close()  # cancelled too: the host sees the end and stops the request


async def _ask(request: dict[str, Any]) -> tuple[dict[str, Any], asyncio.StreamReader, asyncio.StreamWriter] | None:
    """The host's first answer and the connection, when it took `request` (None: no host, or it refused)."""
    line = _line(request)
    if line is None:
        return None
    path = socket_path()
    try:
        check_dir(path.parent)
        reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE)
    except (OSError, HostPlaceError):
        return None
    try:
        writer.write(line)
        await writer.drain()
        first = _first(await reader.readline())
    except OSError:
        first = _first(b"")
    if not first.get("ok"):
        writer.close()
        return None
    return first, reader, writer


def _line(request: dict[str, Any]) -> bytes | None:
    """The request as the one line the host reads (None: not JSON, or too long: made here)."""
    try:
        line = (json.dumps(request, ensure_ascii=False) + "\n").encode()
    except (TypeError, ValueError):
        return None  # something in the conversation that is not JSON
    return line if len(line) <= MAX_LINE else None


def _first(line: bytes) -> dict[str, Any]:
    """The host's first answer (empty when it sent nothing readable), remembered for `lending()`."""
    try:
        first = json.loads(line or b"{}")
    except ValueError:
        first = {}
    if not isinstance(first, dict):
        first = {}
    _state["lent"] = bool(first.get("ok"))
    return first


async def _follow(reader: asyncio.StreamReader, on_text: Callable[[str], None],
                  on_reasoning: Callable[[str], None]) -> Any:
    from agent.llm import LLMError, Retryable

    while True:
        try:
            line = json.loads(await reader.readline() or b"null")  # ValueError: too long, or not JSON
        except (OSError, ValueError):
            line = None
        if not isinstance(line, dict):
            _state["lent"] = False
            raise Retryable("the session host that was making the request went away")
        kind = line.get("type")
        if kind == "model_text":
            on_text(line["text"])
        elif kind == "model_reasoning":
            on_reasoning(line["text"])
        elif kind == "model_done":
            return reply_from_wire(line["reply"])
        elif kind == "model_failed":
            if line.get("retryable"):
                raise Retryable(line["message"], line.get("retry_after"), line.get("kind", ""))
            raise LLMError(line["message"], line.get("kind", "request"))
