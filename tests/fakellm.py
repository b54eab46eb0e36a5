"""A scripted OpenAI-compatible chat-completions server on loopback.

Real HTTP (aiohttp) in a background thread, so litellm's own request path is exercised by
in-process tests and by `coder-tui` subprocesses alike. Each test scripts the replies in order:
streamed text and tool-call deltas, non-streaming answers, HTTP errors (429/500/401/400),
delays, stalls and dropped connections. Every request body is recorded for assertions.

    with FakeLLM() as llm:
        llm.script(Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="done"))
        ... model=llm.model, api_base=llm.url, api_key="sk-test"
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.threaded import ThreadedApp

MODEL = "openai/fake-model"


@dataclass
class ToolCallSpec:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim (e.g. malformed JSON)
    id: str | None = None


def call(name: str, _raw: str | None = None, **arguments: Any) -> ToolCallSpec:
    """A tool call; pass `_raw` to send an arguments string as-is."""
    return ToolCallSpec(name, _raw if _raw is not None else arguments)


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    status: int = 200
    error_message: str = "scripted error"
    error_code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the response starts
    chunk_delay: float = 0.0  # seconds between streamed chunks
    chunk_size: int = 12  # characters of text per chunk
    stall_after: int | None = None  # stop sending (but keep the connection) after N chunks
    drop_after: int | None = None  # close the connection after N chunks
    usage: tuple[int, int] | None = None  # (prompt, completion); default: estimated


class FakeLLM:
    def __init__(self, *replies: Reply, responder: Callable[[dict[str, Any]], Reply] | None = None):
        self._replies: list[Reply] = list(replies)
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadedApp(self._app)

    # -- scripting --------------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._replies)

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/v1"

    model = MODEL

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.responder is not None:
                return self.responder(body)
            if not self._replies:
                return Reply(status=500, error_message="fake LLM: script exhausted")
            return self._replies.pop(0)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeLLM:
        self._server.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self._server.stop()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        return app

    # -- handlers ---------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        reply = self._next(body)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            payload = {"error": {"message": reply.error_message, "type": "scripted", "code": reply.error_code}}
            return web.json_response(payload, status=reply.status, headers=reply.headers)
        usage = self._usage(body, reply)
        if body.get("stream"):
            return await self._stream(request, reply, usage)
        return web.json_response(self._completion(reply, usage))

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, int]:
        if reply.usage:
            prompt, completion = reply.usage
        else:
            prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
            completion = max(1, (len(reply.text) + sum(len(str(c.arguments)) for c in reply.tool_calls)) // 4)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]]:
        calls = []
        for spec in reply.tool_calls:
            args = spec.arguments if isinstance(spec.arguments, str) else json.dumps(spec.arguments)
            calls.append({
                "id": spec.id or f"call_{next(self._ids)}",
                "type": "function",
                "function": {"name": spec.name, "arguments": args},
            })
        return calls

    def _completion(self, reply: Reply, usage: dict[str, int]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = self._tool_calls(reply)
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": [{
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }],
            "usage": usage,
        }

    def _chunks(self, reply: Reply, usage: dict[str, int]) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        text = reply.text
        for start in range(0, len(text), max(1, reply.chunk_size)):
            deltas.append({"content": text[start : start + reply.chunk_size]})
        for index, tc in enumerate(self._tool_calls(reply)):
            args = tc["function"]["arguments"]
            head = {"index": index, "id": tc["id"], "type": "function",
                    "function": {"name": tc["function"]["name"], "arguments": ""}}
            deltas.append({"tool_calls": [head]})
            for start in range(0, len(args), 16):
                piece = {"index": index, "function": {"arguments": args[start : start + 16]}}
                deltas.append({"tool_calls": [piece]})
        chunk_id = f"chatcmpl-{next(self._ids)}"
        base = {"id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": "fake-model"}
        chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        finish = "tool_calls" if reply.tool_calls else "stop"
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        chunks.append({**base, "choices": [], "usage": usage})
        return chunks

    async def _stream(self, request: web.Request, reply: Reply, usage: dict[str, int]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        for sent, chunk in enumerate(self._chunks(reply, usage)):
            if reply.stall_after is not None and sent >= reply.stall_after:
                while not self._closing.is_set():  # hang until the client gives up
                    await asyncio.sleep(0.05)
                return response
            if reply.drop_after is not None and sent >= reply.drop_after:
                request.transport.close()  # type: ignore[union-attr]
                return response
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def _tool_loop_responder(steps: int) -> Callable[[dict[str, Any]], Reply]:
    """Answers with a read_file call `steps` times per conversation, then with text."""

    def respond(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        if done >= steps:
            return Reply(text="done", usage=(100, 1))
        return Reply(tool_calls=[call("read_file", file_path="a.py")], usage=(100, 10))

    return respond


if __name__ == "__main__":  # a separate server process for benchmarks: prints its URL, serves until killed
    import sys

    server = FakeLLM(responder=_tool_loop_responder(int(sys.argv[1]) if len(sys.argv) > 1 else 200)).start()
    print(server.url, flush=True)
    threading.Event().wait()
