"""A scripted Ollama server on loopback (POST /api/chat, and its OpenAI-compatible
POST /v1/chat/completions, which the built-in Chat Completions client uses), driven by `Reply` scripts.

Streams newline-delimited JSON as Ollama does: text pieces in `message.content`, every tool
call whole in one chunk's `message.tool_calls` (its arguments a JSON object, not a string), and
a last `done: true` line with `done_reason`, `prompt_eval_count` and `eval_count`. Errors are
`{"error": "..."}` bodies. Requests go through litellm's `ollama_chat` adapter with
`model="ollama_chat/..."` and `api_base=server.url` (no key) on the litellm path.

/v1/chat/completions answers as tests/fakellm.py's FakeLLM does (Ollama's OpenAI compatibility
layer: the same stream, usage when asked), with Ollama's own refusals: the model must be pulled
(404 `model "x" not found, try pulling it first`), a tool call's `function.arguments` is a JSON
string that must parse (Ollama decodes it into its own object), content a string or text and
image parts. It is not strict as OpenAI is (no tool-count or call-id length limits).

Strict as Ollama is (github.com/ollama/ollama docs/api.md and the Go types it decodes into, whose
decoding errors are its 400 answers): `model` given and pulled (else 404 "not found, try pulling
it first"); each message's `content` a string, `role` a string, `images` strings, a tool call's
`function.arguments` an object (not a JSON string), a tool message's `tool_name` a string;
each tool `{"type": "function", "function": {"name", "parameters"}}` with `parameters.type` a
string, `required` a list of strings, each property's `type` a string or list of strings,
`description` a string and `enum` a list. Refused requests are recorded in `rejected`.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from tests.fakellm import FakeLLM, Reply

MODEL = "ollama_chat/qwen2.5-coder"


class FakeOllama(FakeLLM):
    model = MODEL
    strict = False  # OpenAI's own limits are not Ollama's

    @property
    def url(self) -> str:
        return self._server.base_url

    def routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/api/chat", self._handle_native)
        router.add_post("/api/show", self._show)
        router.add_post("/v1/chat/completions", self._handle_openai)

    async def _handle_openai(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        refused = openai_problem(body, self.model.split("/", 1)[1])
        if refused:
            with self._lock:
                self.rejected.append((body, refused[1]))
            error = {"message": refused[1], "type": "api_error" if refused[0] == 404 else "invalid_request_error",
                     "param": None, "code": None}
            return web.json_response({"error": error}, status=refused[0])
        return await self._handle(request)

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """Ollama's OpenAI-compatible usage: the counts, no cache or reasoning details."""
        prompt, completion = self._estimate(body, reply)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    async def _show(self, request: web.Request) -> web.Response:
        """Model details, which litellm may ask for to learn the context size."""
        name = self.model.split("/", 1)[1]
        return web.json_response({"modelfile": "", "parameters": "num_ctx 32768", "template": "",
                                  "details": {"family": "qwen2", "parameter_size": "7B"},
                                  "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
                                  "capabilities": ["completion", "tools"], "name": name})

    async def _handle_native(self, request: web.Request) -> web.StreamResponse:
        refused = chat_problem(await request.json(), self.model.split("/", 1)[1])
        if refused:
            with self._lock:
                self.rejected.append((await request.json(), refused[1]))
            return web.json_response({"error": refused[1]}, status=refused[0])
        body, reply = await self._take(request)
        if reply.status != 200:
            return web.json_response({"error": reply.error_message}, status=reply.status, headers=reply.headers)
        lines = self._lines(body, reply)
        if body.get("stream", True):  # Ollama streams unless told not to
            frames = [(json.dumps(line) + "\n").encode() for line in lines]
            return await self._send(request, reply, frames, "application/x-ndjson")
        merged = {**lines[-1], "message": {"role": "assistant", "content": reply.text}}
        if reply.tool_calls:
            merged["message"]["tool_calls"] = self._native_calls(reply)
        return web.json_response(merged)

    def _native_calls(self, reply: Reply) -> list[dict[str, Any]]:
        calls = []
        for spec in reply.tool_calls:
            arguments = spec.arguments
            if isinstance(arguments, str):  # scripted malformed input: send what parses, else the text
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    pass
            calls.append({"function": {"name": spec.name, "arguments": arguments}})
        return calls

    def _lines(self, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        base = {"model": self.model.split("/", 1)[1],
                "created_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")}
        size = max(1, reply.chunk_size)
        lines = [{**base, "message": {"role": "assistant", "content": reply.text[i : i + size]}, "done": False}
                 for i in range(0, len(reply.text), size)]
        if reply.tool_calls:
            lines.append({**base, "message": {"role": "assistant", "content": "",
                                              "tool_calls": self._native_calls(reply)}, "done": False})
        prompt, completion = self._estimate(body, reply)
        lines.append({**base, "message": {"role": "assistant", "content": ""}, "done": True,
                      "done_reason": "stop", "total_duration": 1_000_000, "load_duration": 1000,
                      "prompt_eval_count": prompt, "prompt_eval_duration": 1000,
                      "eval_count": completion, "eval_duration": 1000})
        return lines


def _go_type(value: Any) -> str:
    return {str: "string", bool: "bool", int: "number", float: "number", list: "array", dict: "object"}.get(
        type(value), "null")


def _unmarshal(value: Any, want: type, field: str, go: str) -> str | None:
    """Go's json decoding error for a value of the wrong JSON type (None when it decodes)."""
    if value is None or isinstance(value, want):
        return None
    return f"json: cannot unmarshal {_go_type(value)} into Go struct field {field} of type {go}"


def openai_problem(body: dict[str, Any], pulled: str) -> tuple[int, str] | None:
    """(status, message) Ollama's /v1/chat/completions answers this body with, or None."""
    model = body.get("model")
    if not model:
        return 400, "model is required"
    if model not in (pulled, f"{pulled}:latest"):
        return 404, f'model "{model}" not found, try pulling it first'
    for message in body.get("messages") or []:
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            return 400, "invalid message content type"
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict) or part.get("type") not in ("text", "image_url"):
                return 400, "invalid message format"
        for call in message.get("tool_calls") or []:
            arguments = (call.get("function") or {}).get("arguments")
            try:
                if not isinstance(json.loads(arguments), dict):
                    raise ValueError
            except (TypeError, ValueError):
                return 400, "invalid tool call arguments"
    return None


def chat_problem(body: dict[str, Any], pulled: str) -> tuple[int, str] | None:
    """(status, error) Ollama answers this /api/chat body with, or None when it accepts it."""
    model = body.get("model")
    if not model:
        return 400, "model is required"
    if model not in (pulled, f"{pulled}:latest"):
        return 404, f'model "{model}" not found, try pulling it first'
    for message in body.get("messages") or []:
        problem = (_unmarshal(message.get("role"), str, "ChatRequest.messages.role", "string")
                   or _unmarshal(message.get("content"), str, "ChatRequest.messages.content", "string")
                   or _unmarshal(message.get("tool_name"), str, "ChatRequest.messages.tool_name", "string")
                   or next(filter(None, (_unmarshal(i, str, "ChatRequest.messages.images", "api.ImageData")
                                         for i in message.get("images") or [])), None)
                   or next(filter(None, (_unmarshal((c.get("function") or {}).get("arguments"), dict,
                                                    "ChatRequest.messages.tool_calls.function.arguments",
                                                    "api.ToolCallFunctionArguments")
                                         for c in message.get("tool_calls") or [])), None))
        if problem:
            return 400, problem
    for tool in body.get("tools") or []:
        problem = _tool_problem(tool)
        if problem:
            return 400, problem
    return None


def _tool_problem(tool: dict[str, Any]) -> str | None:
    function = tool.get("function") or {}
    parameters = function.get("parameters") or {}
    where = "ChatRequest.tools.function.parameters"
    problem = (_unmarshal(function.get("name"), str, "ChatRequest.tools.function.name", "string")
               or _unmarshal(parameters, dict, where, "struct")
               or _unmarshal(parameters.get("type"), str, f"{where}.type", "string")
               or _unmarshal(parameters.get("required"), list, f"{where}.required", "[]string")
               or _unmarshal(parameters.get("properties"), dict, f"{where}.properties", "map[string]api.ToolProperty"))
    if problem:
        return problem
    for name in parameters.get("required") or []:
        if not isinstance(name, str):
            return f"json: cannot unmarshal {_go_type(name)} into Go struct field {where}.required of type string"
    for prop in (parameters.get("properties") or {}).values():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if not isinstance(prop, dict):
            return f"json: cannot unmarshal {_go_type(prop)} into Go value of type api.ToolProperty"
        if kind is not None and not (isinstance(kind, str) or isinstance(kind, list)
                                     and all(isinstance(k, str) for k in kind)):
            return "invalid type: must be a string or an array of strings"
        problem = (_unmarshal(prop.get("description"), str, f"{where}.properties.description", "string")
                   or _unmarshal(prop.get("enum"), list, f"{where}.properties.enum", "[]interface {}"))
        if problem:
            return problem
    return None
