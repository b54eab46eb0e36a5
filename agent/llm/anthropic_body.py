"""The conversation (OpenAI Chat format, as the session keeps it) as an Anthropic Messages request.

- system messages become the top-level `system` blocks (with their cache marks);
- a user message's parts become text and image blocks (a data URL as a base64 source);
- an assistant message becomes its thinking blocks exactly as received (signature and redacted
  data untouched), its text, then a `tool_use` block per call (the arguments as an object);
- tool results become `tool_result` blocks, first in the user turn that follows the calls;
  consecutive turns of one role are merged, as the API would merge them;
- cache marks (`cache_control`, agent/llm/usage.py) move onto the block they marked;
- reasoning: a thinking budget per level, or adaptive thinking with `output_config.effort` for
  the models whose facts say so; never more budget than the output limit leaves.
"""

from __future__ import annotations

import json
from typing import Any

from agent.llm.facts import facts
from agent.llm.reasoning import BUDGETS, takes_effort
from agent.llm.request import Request

DEFAULT_MAX_TOKENS = 4096  # when the facts do not know the model's output limit (litellm's default too)
MIN_BUDGET = 1024  # Anthropic's smallest thinking budget


def body(request: Request) -> dict[str, Any]:
    llm, known = request, facts(request.model)
    max_tokens = llm.max_tokens or known.max_output or DEFAULT_MAX_TOKENS
    system, turns = convert(request.messages)
    out: dict[str, Any] = {"model": request.route.model, "max_tokens": max_tokens, "messages": turns, "stream": True}
    if system:
        out["system"] = system
    if request.tools:
        out["tools"] = [tool(t) for t in request.tools]
    if llm.reasoning != "off" and takes_effort(llm.model):
        if known.adaptive_thinking:
            out["thinking"] = {"type": "adaptive"}
            out["output_config"] = {"effort": llm.reasoning}
        elif max_tokens > MIN_BUDGET:
            out["thinking"] = {"type": "enabled", "budget_tokens": min(BUDGETS[llm.reasoning], max_tokens - 1)}
    return out


def tool(schema: dict[str, Any]) -> dict[str, Any]:
    function = schema.get("function") or {}
    out: dict[str, Any] = {"name": function.get("name", ""),
                           "input_schema": function.get("parameters") or {"type": "object", "properties": {}}}
    if function.get("description"):
        out["description"] = function["description"]
    if "cache_control" in schema:
        out["cache_control"] = schema["cache_control"]
    return out


def convert(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, merged user/assistant turns)."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system += [b for b in _parts(message.get("content")) if b.get("type") == "text"]
            continue
        if role == "assistant":
            blocks, role = _assistant(message), "assistant"
        elif role == "tool":
            blocks, role = [_result(message)], "user"
        else:
            blocks, role = _parts(message.get("content")), "user"
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def _parts(content: Any) -> list[dict[str, Any]]:
    """Text and image blocks of a message's content (empty text left out: the API refuses it)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        block = _part(part)
        if block is None:
            continue
        if "cache_control" in part:
            block["cache_control"] = part["cache_control"]
        blocks.append(block)
    return blocks


def _part(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "text":
        text = part.get("text") or ""
        return {"type": "text", "text": text} if text.strip() else None
    if kind == "image_url":
        url = (part.get("image_url") or {}).get("url", "") if isinstance(part.get("image_url"), dict) else ""
        if url.startswith("data:"):
            head, _, data = url.partition(",")
            media = head.removeprefix("data:").split(";")[0]
            return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
        return {"type": "image", "source": {"type": "url", "url": url}}
    return None


def _assistant(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = [dict(b) for b in message.get("thinking_blocks") or [] if isinstance(b, dict)]
    blocks += _parts(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        block: dict[str, Any] = {"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""),
                                 "input": _input(function.get("arguments"))}
        if "cache_control" in call:
            block["cache_control"] = call["cache_control"]
        blocks.append(block)
    return blocks


def _input(arguments: Any) -> dict[str, Any]:
    """A call's arguments as the object Anthropic takes ({} for anything else: the loop keeps only
    JSON objects, agent/loop.py)."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else arguments
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _result(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.get("tool_call_id", "")}
    if isinstance(content, list):
        block["content"] = _parts(content)
    else:
        block["content"] = "" if content is None else str(content)
    if "cache_control" in message:
        block["cache_control"] = message["cache_control"]
    return block
