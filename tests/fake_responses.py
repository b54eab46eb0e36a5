"""A scripted, strict OpenAI Responses API server on loopback (POST /v1/responses).

Models litellm knows as Responses-only (`openai/gpt-5-codex` and family, `mode: responses` in
its model map) are sent here by litellm's Responses bridge with `api_base=server.url`. Replies
come from the same `Reply` scripts as tests/fakellm.py and stream as OpenAI's typed events:
`response.created`, `response.in_progress`, for reasoning (only when the request asks for a
summary, as OpenAI does) `response.output_item.added` of a `reasoning` item and
`response.reasoning_summary_part.added` / `response.reasoning_summary_text.delta` / `.done`,
for text a `message` item with `response.content_part.added` and `response.output_text.delta`,
for each tool call a `function_call` item with `response.function_call_arguments.delta`, each
item closed by `response.output_item.done`, then `response.completed` with the whole response
and its usage. A non-streaming request gets that response object.

Strict as the real API (tests/strict_openai.py for the error body, status 400): `input` items of
known types, messages of known roles, every `function_call` answered by a
`function_call_output` with its `call_id` and no output without its call, call ids unique;
tools of a known `type`, function names and count as in Chat Completions, parameters an object
schema. Reasoning text is a `Reply`'s `reasoning` (use `Reasoned` while `Reply` has none).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakellm import Reply, ScriptedServer
from tests.strict_openai import Problem, tools_problem

MODEL = "openai/gpt-5-codex"
ROLES = ("assistant", "system", "developer", "user")
ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning", "item_reference")
# the tool types of OpenAI's published schema (tests/contracts/openai_requests.json, `Tool`)
TOOL_TYPES = ("function", "file_search", "computer", "computer_use_preview", "web_search", "web_search_2025_08_26",
              "mcp", "code_interpreter", "programmatic_tool_calling", "image_generation", "local_shell", "shell",
              "custom", "namespace", "tool_search", "web_search_preview", "web_search_preview_2025_03_11",
              "apply_patch")


@dataclass
class Reasoned(Reply):
    """A `Reply` with the model's reasoning (sent as a summary when the request asks for one)."""

    reasoning: str = ""


class FakeResponses(ScriptedServer):
    model = MODEL

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/v1"

    def routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/v1/responses", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        problem = responses_problem(await request.json())
        if problem:
            with self._lock:
                self.rejected.append((await request.json(), problem))
            return problem.response()
        body, reply = await self._take(request)
        if reply.status != 200:
            error = {"message": reply.error_message, "type": "scripted", "param": None, "code": reply.error_code}
            return web.json_response({"error": error}, status=reply.status, headers=reply.headers)
        events, done = self._events(body, reply)
        if body.get("stream"):
            frames = [self.sse(e, e["type"]) for e in events]
            return await self._send(request, reply, frames, "text/event-stream")
        return web.json_response(done)

    # -- the events of one response ---------------------------------------------------------
    def _events(self, body: dict[str, Any], reply: Reply) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        response_id = f"resp_{next(self._ids)}"
        base = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": body.get("model"),
                "output": [], "status": "in_progress", "tools": body.get("tools", []), "usage": None}
        events: list[dict[str, Any]] = [{"type": "response.created", "response": dict(base)},
                                        {"type": "response.in_progress", "response": dict(base)}]
        output: list[dict[str, Any]] = []
        reasoning = getattr(reply, "reasoning", "")
        if reasoning and (body.get("reasoning") or {}).get("summary"):
            events += self._item(output, self._reasoning(reasoning, reply.chunk_size, len(output)))
        if reply.text:
            events += self._item(output, self._message(reply.text, reply.chunk_size, len(output)))
        for spec in reply.tool_calls:
            events += self._item(output, self._function_call(self._call_id(spec), spec.name,
                                                             self._arguments(spec), len(output)))
        prompt, completion = self._estimate({"messages": body.get("input")}, reply)
        usage = {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": reply.cache_read},
                 "output_tokens": completion,
                 "output_tokens_details": {"reasoning_tokens": max(0, len(reasoning) // 4)},
                 "total_tokens": prompt + completion}
        done = {**base, "status": "completed", "output": output, "usage": usage}
        events.append({"type": "response.completed", "response": done})
        for number, event in enumerate(events):
            event["sequence_number"] = number
        return events, done

    @staticmethod
    def _item(output: list[dict[str, Any]], built: tuple[dict[str, Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        item, middle = built
        index = len(output)
        output.append(item)
        opened = {**item, "status": "in_progress"} if "status" in item else item
        if item["type"] == "function_call":
            opened = {**opened, "arguments": ""}
        return ([{"type": "response.output_item.added", "output_index": index, "item": opened}] + middle
                + [{"type": "response.output_item.done", "output_index": index, "item": item}])

    def _reasoning(self, text: str, size: int, index: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        item_id = f"rs_{next(self._ids)}"
        at = {"item_id": item_id, "output_index": index, "summary_index": 0}
        part = {"type": "summary_text", "text": text}
        middle = [{"type": "response.reasoning_summary_part.added", **at, "part": {**part, "text": ""}}]
        middle += [{"type": "response.reasoning_summary_text.delta", **at, "delta": piece} for piece in _pieces(text, size)]
        middle += [{"type": "response.reasoning_summary_text.done", **at, "text": text},
                   {"type": "response.reasoning_summary_part.done", **at, "part": part}]
        return {"id": item_id, "type": "reasoning", "summary": [part]}, middle

    def _message(self, text: str, size: int, index: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        item_id = f"msg_{next(self._ids)}"
        at = {"item_id": item_id, "output_index": index, "content_index": 0}
        part = {"type": "output_text", "text": text, "annotations": []}
        middle = [{"type": "response.content_part.added", **at, "part": {**part, "text": ""}}]
        middle += [{"type": "response.output_text.delta", **at, "delta": piece} for piece in _pieces(text, size)]
        middle += [{"type": "response.output_text.done", **at, "text": text},
                   {"type": "response.content_part.done", **at, "part": part}]
        item = {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]}
        return item, middle

    def _function_call(self, call_id: str, name: str, arguments: str,
                       index: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        item_id = f"fc_{next(self._ids)}"
        at = {"item_id": item_id, "output_index": index}
        middle = [{"type": "response.function_call_arguments.delta", **at, "delta": piece}
                  for piece in _pieces(arguments, 16)]
        middle.append({"type": "response.function_call_arguments.done", **at, "arguments": arguments})
        item = {"id": item_id, "type": "function_call", "status": "completed", "arguments": arguments,
                "call_id": call_id, "name": name}
        return item, middle


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def responses_problem(body: dict[str, Any]) -> Problem | None:
    """Why OpenAI's Responses API would reject this request body (None: it would accept it)."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        return Problem("Missing required parameter: 'input'.", "input", "missing_required_parameter")
    return _items_problem(items) or _tools_problem(body.get("tools") or [])


def _items_problem(items: list[dict[str, Any]]) -> Problem | None:
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind not in ITEM_TYPES:
            return Problem(f"Invalid value: '{kind}'. Supported values are: "
                           + ", ".join(f"'{t}'" for t in ITEM_TYPES) + ".", f"input[{i}].type", "invalid_value")
        if kind == "message" and item.get("role") not in ROLES:
            return Problem(f"Invalid value: '{item.get('role')}'. Supported values are: 'assistant', 'system', "
                           "'developer', and 'user'.", f"input[{i}].role", "invalid_value")
        if kind == "function_call":
            call_id = str(item.get("call_id") or "")
            if not call_id or call_id in calls:
                return Problem(f"Duplicate or missing call_id '{call_id}' in input[{i}].", f"input[{i}].call_id",
                               "invalid_value")
            calls[call_id] = i
        if kind == "function_call_output":
            if item.get("call_id") not in calls:
                return Problem(f"No tool call found for function call output with call_id {item.get('call_id')}.",
                               "input")
            answered.add(item["call_id"])
    for call_id in calls:
        if call_id not in answered:
            return Problem(f"No tool output found for function call {call_id}.", "input")
    return None


def _tools_problem(tools: list[dict[str, Any]]) -> Problem | None:
    for i, tool in enumerate(tools):
        if tool.get("type") not in TOOL_TYPES:
            return Problem(f"Invalid value: '{tool.get('type')}'. Supported values are: "
                           + ", ".join(f"'{t}'" for t in TOOL_TYPES) + ".", f"tools[{i}].type", "invalid_value")
    return tools_problem([t for t in tools if t.get("type") == "function"], "tools[{}]")

