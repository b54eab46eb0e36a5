"""A scripted Ollama server on loopback (POST /api/chat), driven by `Reply` scripts.

Streams newline-delimited JSON as Ollama does: text pieces in `message.content`, every tool
call whole in one chunk's `message.tool_calls` (its arguments a JSON object, not a string), and
a last `done: true` line with `done_reason`, `prompt_eval_count` and `eval_count`. Errors are
`{"error": "..."}` bodies. Requests go through litellm's `ollama_chat` adapter with
`model="ollama_chat/..."` and `api_base=server.url` (no key).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from tests.fakellm import Reply, ScriptedServer

MODEL = "ollama_chat/qwen2.5-coder"


class FakeOllama(ScriptedServer):
    model = MODEL

    def routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/api/chat", self._handle)
        router.add_post("/api/show", self._show)

    async def _show(self, request: web.Request) -> web.Response:
        """Model details, which litellm may ask for to learn the context size."""
        name = self.model.split("/", 1)[1]
        return web.json_response({"modelfile": "", "parameters": "num_ctx 32768", "template": "",
                                  "details": {"family": "qwen2", "parameter_size": "7B"},
                                  "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
                                  "capabilities": ["completion", "tools"], "name": name})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body, reply = await self._take(request)
        if reply.status != 200:
            return web.json_response({"error": reply.error_message}, status=reply.status, headers=reply.headers)
        lines = self._lines(body, reply)
        if body.get("stream", True):  # Ollama streams unless told not to
            frames = [(json.dumps(line) + "\n").encode() for line in lines]
            return await self._send(request, reply, frames, "application/x-ndjson")
        merged = {**lines[-1], "message": {"role": "assistant", "content": reply.text}}
        if reply.tool_calls:
            merged["message"]["tool_calls"] = self._tool_calls(reply)
        return web.json_response(merged)

    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]]:
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
                                              "tool_calls": self._tool_calls(reply)}, "done": False})
        prompt, completion = self._estimate(body, reply)
        lines.append({**base, "message": {"role": "assistant", "content": ""}, "done": True,
                      "done_reason": "stop", "total_duration": 1_000_000, "load_duration": 1000,
                      "prompt_eval_count": prompt, "prompt_eval_duration": 1000,
                      "eval_count": completion, "eval_duration": 1000})
        return lines
