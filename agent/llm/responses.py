"""The built-in OpenAI Responses client (`openai/responses/...`, and the models whose facts say mode
"responses": openai/gpt-5-codex): one streamed POST /responses, nothing stored at OpenAI.

The conversation becomes input items: leading system text the `instructions`, messages as
messages (images as `input_image`), each tool call a `function_call` and each result a
`function_call_output` with its `call_id`. Tools are flat function tools, not strict (our schemas
are plain JSON Schema). A reasoning level asks for that effort and a reasoning summary, which
streams back as reasoning; reasoning items are not sent back (no encrypted content is asked for),
so a level changed inside a tool loop or a resumed session with masked reasoning needs nothing of
them. Calls are assembled per output item, so parallel calls arrive whole.
"""

from __future__ import annotations

import json
from typing import Any

from agent.llm.errors import body_message, failure
from agent.llm.http import events, raise_failure
from agent.llm.reasoning import takes_effort
from agent.llm.request import Request
from agent.llm.types import ModelReply, TextHook, ToolCallRequest

REASONING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")


def body(request: Request) -> dict[str, Any]:
    llm = request
    instructions, items = convert(request.messages)
    out: dict[str, Any] = {"model": request.route.model, "input": items, "stream": True, "store": False}
    if instructions:
        out["instructions"] = instructions
    if request.tools:
        out["tools"] = [tool(t) for t in request.tools]
    if llm.max_tokens:
        out["max_output_tokens"] = llm.max_tokens
    if llm.reasoning != "off" and takes_effort(llm.model):
        out["reasoning"] = {"effort": llm.reasoning, "summary": "auto"}
    return out


def tool(schema: dict[str, Any]) -> dict[str, Any]:
    function = schema.get("function") or {}
    out = {"type": "function", "name": function.get("name", ""),
           "parameters": function.get("parameters") or {"type": "object", "properties": {}}, "strict": False}
    if function.get("description"):
        out["description"] = function["description"]
    return out


def convert(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(instructions, input items)."""
    leading = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    instructions = [str(m.get("content")) for m in messages[:leading] if isinstance(m.get("content"), str)]
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if index < leading and isinstance(content, str):
            continue
        if role == "tool":
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id", ""),
                          "output": _text(content)})
            continue
        if content not in (None, "", []):
            items.append({"type": "message", "role": role, "content": _content(content, role)})
        for call in message.get("tool_calls") or [] if role == "assistant" else []:
            function = call.get("function") or {}
            items.append({"type": "function_call", "call_id": call.get("id", ""), "name": function.get("name", ""),
                          "arguments": function.get("arguments") or "{}"})
    return "\n\n".join(instructions), items


def _content(content: Any, role: Any) -> Any:
    if isinstance(content, str) or role == "assistant":
        return _text(content)
    parts = []
    for part in content:
        if part.get("type") == "text":
            parts.append({"type": "input_text", "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return parts


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def headers(request: Request) -> dict[str, str]:
    return {"Authorization": f"Bearer {request.key}"} if request.key else {}


async def attempt(request: Request, on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
    reply = ModelReply()
    calls: dict[int, ToolCallRequest] = {}
    url = request.route.url("/responses")
    async with events(url, headers(request), body(request), request.timeout, request.place) as stream:
        async for event, data in stream:
            if _take(event or str(data.get("type", "")), data, reply, calls, on_text, on_reasoning, request):
                break
    reply.tool_calls = [calls[i] for i in sorted(calls)]
    if reply.finish_reason == "stop" and reply.tool_calls:
        reply.finish_reason = "tool_calls"
    return reply


def _take(kind: str, data: dict[str, Any], reply: ModelReply, calls: dict[int, ToolCallRequest], on_text: TextHook,
          on_reasoning: TextHook, request: Request) -> bool:
    """Take one event; True at the end of the response."""
    index = int(data.get("output_index", 0))
    if kind == "response.output_text.delta" and (text := str(data.get("delta", ""))):
        reply.text += text
        on_text(text)
    elif kind in REASONING_DELTAS and (text := str(data.get("delta", ""))):
        reply.thinking.add_text(text)
        on_reasoning(text)
    elif kind in ("response.output_item.added", "response.output_item.done"):
        item = data.get("item") or {}
        if item.get("type") == "function_call":
            call = calls.setdefault(index, ToolCallRequest(id="", name="", arguments=""))
            call.id, call.name = str(item.get("call_id") or call.id), str(item.get("name") or call.name)
            if kind.endswith(".done") and isinstance(item.get("arguments"), str):
                call.arguments = item["arguments"]
    elif kind == "response.function_call_arguments.delta" and index in calls:
        calls[index].arguments += str(data.get("delta", ""))
    elif kind in ("response.completed", "response.incomplete"):
        _finish(data.get("response") or {}, reply)
        return True
    elif kind in ("response.failed", "error"):
        error = (data.get("response") or {}).get("error") or data
        raise_failure(failure("server", request.place, body_message(json.dumps({"error": error})), 500))
    return False


def _finish(response: dict[str, Any], reply: ModelReply) -> None:
    reason = str((response.get("incomplete_details") or {}).get("reason") or "")
    reply.finish_reason = {"max_output_tokens": "length", "content_filter": "content_filter"}.get(reason, "stop")
    usage = response.get("usage")
    if isinstance(usage, dict):
        reply.usage_seen = True
        reply.prompt_tokens = int(usage.get("input_tokens") or 0)
        reply.completion_tokens = int(usage.get("output_tokens") or 0)
        reply.cache_read_tokens = int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0)
        reply.reasoning_tokens = int((usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0)
