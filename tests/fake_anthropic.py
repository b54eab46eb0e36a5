"""A scripted Anthropic Messages API server on loopback (POST /v1/messages), driven by `Reply` scripts.

Streams as Anthropic does: `message_start` (input, cache-creation and cache-read tokens),
a `text` content block of `text_delta`s, one `tool_use` block per call whose input arrives as
`input_json_delta` pieces, then `message_delta` (stop reason, output tokens) and `message_stop`.
Errors use Anthropic's `{"type": "error", "error": {...}}` body. Requests go through litellm's
own Anthropic adapter with `model="anthropic/..."` and `api_base=server.url`.

Strict as the real API is (tests/anthropic_rules.py): a request it would refuse is answered 400
`invalid_request_error` with its message (recorded in `rejected`; the script is not consumed).
When the request enables thinking, a reply's `reasoning` streams first as a thinking block
(`thinking_delta`s, then a `signature_delta` the server checks when the block comes back), and
`redacted_thinking=True` adds a redacted_thinking block before it.

    with FakeAnthropic(Reply(tool_calls=[call("read_file", file_path="a.py")], cache_read=900)) as llm:
        ... model=llm.model, api_base=llm.url, api_key="sk-ant-test"
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tests.anthropic_rules import Signer, problem
from tests.fakellm import Reply, ScriptedServer

MODEL = "anthropic/claude-sonnet-4-5"
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 529: "overloaded_error"}


class FakeAnthropic(ScriptedServer):
    model = MODEL

    def __init__(self, *replies: Reply, **kwargs: Any) -> None:
        super().__init__(*replies, **kwargs)
        self.signer = Signer()
        self.rejected: list[str] = []  # the error messages of refused requests, in order

    def routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/v1/messages", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if (refused := problem(body, self.signer)) is not None:
            with self._lock:
                self.requests.append(body)
                self.headers.append(dict(request.headers))
                self.rejected.append(refused)
            payload = {"type": "error", "error": {"type": "invalid_request_error", "message": refused}}
            return web.json_response(payload, status=400)
        body, reply = await self._take(request)
        self._thinking = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
        if reply.status != 200:
            kind = reply.error_code or ERROR_TYPES.get(reply.status, "api_error")
            payload = {"type": "error", "error": {"type": kind, "message": reply.error_message}}
            return web.json_response(payload, status=reply.status, headers=reply.headers)
        usage = self._usage(body, reply)
        if body.get("stream"):
            return await self._send(request, reply, self._events(reply, usage), "text/event-stream")
        return web.json_response(self._message(reply, usage, self._blocks(reply)))

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, int]:
        # Anthropic's input_tokens counts only the uncached part of the prompt.
        prompt, completion = self._estimate(body, reply)
        return {"input_tokens": max(0, prompt - reply.cache_write - reply.cache_read),
                "cache_creation_input_tokens": reply.cache_write,
                "cache_read_input_tokens": reply.cache_read, "output_tokens": completion}

    def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if self._thinking and reply.redacted_thinking:
            blocks.append({"type": "redacted_thinking", "data": self.signer.redacted(reply.reasoning)})
        if self._thinking and reply.reasoning:
            blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": self.signer.sign(reply.reasoning)})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for spec in reply.tool_calls:
            blocks.append({"type": "tool_use", "id": self._call_id(spec, "toolu_"), "name": spec.name,
                           "input": spec.arguments})  # a str stays a str: malformed input as sent
        return blocks

    def _message(self, reply: Reply, usage: dict[str, int], content: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": f"msg_{next(self._ids)}", "type": "message", "role": "assistant",
                "model": self.model.split("/", 1)[1], "content": content,
                "stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None,
                "usage": usage}

    def _events(self, reply: Reply, usage: dict[str, int]) -> list[bytes]:
        start = self._message(reply, {**usage, "output_tokens": 1}, [])
        start["stop_reason"] = None
        events = [self.sse({"type": "message_start", "message": start}, "message_start")]
        for index, block in enumerate(self._blocks(reply)):
            events += self._block(index, block, reply.chunk_size)
        stop = {"stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None}
        events.append(self.sse({"type": "message_delta", "delta": stop,
                                "usage": {"output_tokens": usage["output_tokens"]}}, "message_delta"))
        events.append(self.sse({"type": "message_stop"}, "message_stop"))
        return events

    def _block(self, index: int, block: dict[str, Any], size: int) -> list[bytes]:
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            text = block["text"]
            deltas = [{"type": "text_delta", "text": text[i : i + size]} for i in range(0, len(text), max(1, size))]
        elif block["type"] == "thinking":
            opening, text = {"type": "thinking", "thinking": "", "signature": ""}, block["thinking"]
            deltas = [{"type": "thinking_delta", "thinking": text[i : i + size]} for i in range(0, len(text), max(1, size))]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "redacted_thinking":
            opening, deltas = block, []
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": raw[i : i + 16]} for i in range(0, len(raw), 16)]
        frames = [self.sse({"type": "content_block_start", "index": index, "content_block": opening},
                           "content_block_start")]
        frames += [self.sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
                   for d in deltas]
        frames.append(self.sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        return frames
