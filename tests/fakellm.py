"""A scripted OpenAI-compatible chat-completions server on loopback, and the base of its siblings.

Real HTTP (aiohttp) in a background thread, so litellm's own request path is exercised by
in-process tests and by `coder-tui` subprocesses alike. Each test scripts the replies in order:
streamed text and tool-call deltas, non-streaming answers, HTTP errors (429/500/401/400, with the
provider's own body and headers when scripted), any finish reason (`length`, `content_filter`), delays, stalls and dropped connections. Every request body is recorded for assertions.

    with FakeLLM() as llm:
        llm.script(Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="done"))
        ... model=llm.model, api_base=llm.url, api_key="sk-test"

`ScriptedServer` holds what every provider's double shares (the script, recorded requests,
usage estimates, the streaming mechanics of delays, stalls and drops); `FakeLLM` speaks the
OpenAI wire format, tests/fake_anthropic.py the Anthropic Messages API and tests/fake_ollama.py
Ollama's /api/chat, all from the same `Reply` script.
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

from tests.strict_openai import Problem, chat_problem
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
    # an error's whole JSON body as the provider sends it (default: built from error_message/error_code)
    error_body: dict[str, Any] | None = None
    delay: float = 0.0  # seconds before the response starts
    # The response starts once the test sets this event (a test sees the state before it, however
    # slow the machine): held at most 60 s, then answered anyway.
    hold: threading.Event | None = None
    chunk_delay: float = 0.0  # seconds between streamed chunks
    chunk_size: int = 12  # characters of text per chunk
    stall_after: int | None = None  # stop sending (but keep the connection) after N chunks
    drop_after: int | None = None  # close the connection after N chunks
    # the finish reason sent ("length": cut off by max_tokens, "content_filter"); default: the natural one
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None  # (prompt, completion); default: estimated
    # prompt tokens written to / read from the provider's prompt cache (part of the prompt's count)
    cache_write: int = 0
    cache_read: int = 0
    # the model's reasoning, streamed before its text: Anthropic (when the request enables
    # thinking) a signed thinking block, OpenAI-compatible `reasoning_content` deltas
    reasoning: str = ""
    redacted_thinking: bool = False  # Anthropic: a redacted_thinking block first


class ScriptedServer:
    """The script, the recorded requests and the server's lifecycle; subclasses speak a wire format."""

    model = MODEL

    def __init__(self, *replies: Reply, responder: Callable[[dict[str, Any]], Reply] | None = None):
        self._replies: list[Reply] = list(replies)
        # Called on the server's event loop: a responder must never block (a Reply's `hold` waits
        # off the loop); one that waited stopped every other request to this server.
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # the request headers, in the order of `requests`
        self.rejected: list[tuple[dict[str, Any], Any]] = []  # (body, why) of requests refused as invalid
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

    async def until_asked(self, count: int, timeout: float = 60) -> None:
        """Wait until the server has received `count` requests (a held reply's request has arrived:
        stopping the turn now stops it mid-request, not before the request was sent)."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            assert time.monotonic() < deadline, f"the model got {len(self.requests)} requests, not {count}, in {timeout} s"
            await asyncio.sleep(0.02)

    @property
    def url(self) -> str:
        return self._server.base_url

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self.responder is not None:
                return self.responder(body)
            if not self._replies:
                return Reply(status=500, error_message="fake LLM: script exhausted")
            return self._replies.pop(0)

    async def _take(self, request: web.Request) -> tuple[dict[str, Any], Reply]:
        """The request's body and the scripted reply to it, after the reply's delay."""
        body = await request.json()
        reply = self._next(body, dict(request.headers))
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.hold is not None:
            await asyncio.to_thread(reply.hold.wait, 60)
        return body, reply

    def _call_id(self, spec: ToolCallSpec, prefix: str = "call_") -> str:
        return spec.id or f"{prefix}{next(self._ids)}"

    @staticmethod
    def _arguments(spec: ToolCallSpec) -> str:
        return spec.arguments if isinstance(spec.arguments, str) else json.dumps(spec.arguments)

    @staticmethod
    def _estimate(body: dict[str, Any], reply: Reply) -> tuple[int, int]:
        """(prompt, completion) tokens: the scripted figures, or about four characters a token."""
        if reply.usage:
            return reply.usage
        sent = [body["system"], body.get("messages", [])] if "system" in body else body.get("messages", [])
        prompt = max(1, len(json.dumps(sent)) // 4)
        written = len(reply.reasoning) + len(reply.text) + sum(len(str(c.arguments)) for c in reply.tool_calls)
        completion = max(1, written // 4)
        return prompt, completion

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> Any:
        self._server.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self._server.stop()

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        self.routes(app.router)
        return app

    def routes(self, router: web.UrlDispatcher) -> None:
        raise NotImplementedError

    # -- streaming --------------------------------------------------------------------------
    async def _send(self, request: web.Request, reply: Reply, frames: list[bytes], content_type: str,
                    end: bytes = b"") -> web.StreamResponse:
        """Stream the wire frames, honouring the reply's chunk delay, stall and drop."""
        response = web.StreamResponse(headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
        await response.prepare(request)
        for sent, frame in enumerate(frames):
            if reply.stall_after is not None and sent >= reply.stall_after:
                while not self._closing.is_set():  # hang until the client gives up
                    await asyncio.sleep(0.05)
                return response
            if reply.drop_after is not None and sent >= reply.drop_after:
                request.transport.close()  # type: ignore[union-attr]
                return response
            await response.write(frame)
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
        if end:
            await response.write(end)
        await response.write_eof()
        return response

    @staticmethod
    def sse(data: dict[str, Any], event: str | None = None) -> bytes:
        head = f"event: {event}\n" if event else ""
        return f"{head}data: {json.dumps(data)}\n\n".encode()


class FakeLLM(ScriptedServer):
    """The OpenAI chat-completions wire format, strict as OpenAI is (tests/strict_openai.py).

    A request OpenAI would reject is answered with OpenAI's 400 error and recorded in `rejected`
    (body, problem); it takes no scripted reply. `strict = False` turns the checks off. Content parts
    are checked as OpenAI checks them (`content_problem`): a request with a malformed part, or with
    an image when `vision` is False (a text-only model), is answered 400."""

    strict = True
    vision = True

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/v1"

    def routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/v1/chat/completions", self._handle)
        router.add_post("/chat/completions", self._handle)
        router.add_post("/openai/deployments/{deployment}/chat/completions", self._handle)  # Azure OpenAI
        router.add_get("/v1/models", self._models)

    # -- handlers ---------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        problem = self.strict and chat_problem(await request.json())
        if problem:
            return self._reject(await request.json(), problem)
        body, reply = await self._take(request)
        if (problem := content_problem(body.get("messages", []), self.vision)) is not None:
            reply = Reply(status=400, error_message=problem, error_code="invalid_request_error")
        if reply.status != 200:
            payload = reply.error_body or {"error": {"message": reply.error_message, "type": "scripted",
                                                     "code": reply.error_code}}
            return web.json_response(payload, status=reply.status, headers=reply.headers)
        usage = self._usage(body, reply)
        if body.get("stream"):
            frames = [self.sse(chunk) for chunk in self._chunks(reply, usage)]
            return await self._send(request, reply, frames, "text/event-stream", end=b"data: [DONE]\n\n")
        return web.json_response(self._completion(reply, usage))

    def _reject(self, body: dict[str, Any], problem: Problem) -> web.Response:
        with self._lock:
            self.rejected.append((body, problem))
        return problem.response()

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        prompt, completion = self._estimate(body, reply)
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "total_tokens": prompt + completion}
        if reply.cache_read:
            usage["prompt_tokens_details"] = {"cached_tokens": reply.cache_read}
        if reply.reasoning:
            usage["completion_tokens_details"] = {"reasoning_tokens": max(1, len(reply.reasoning) // 4)}
        return usage

    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]]:
        return [{"id": self._call_id(spec), "type": "function",
                 "function": {"name": spec.name, "arguments": self._arguments(spec)}}
                for spec in reply.tool_calls]

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
                "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"),
            }],
            "usage": usage,
        }

    def _chunks(self, reply: Reply, usage: dict[str, int]) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        thought = reply.reasoning
        for start in range(0, len(thought), max(1, reply.chunk_size)):
            deltas.append({"reasoning_content": thought[start : start + reply.chunk_size]})
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
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        chunks.append({**base, "choices": [], "usage": usage})
        return chunks


IMAGE_MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "jpeg": b"\xff\xd8\xff", "gif": b"GIF8", "webp": b"RIFF"}


def content_problem(messages: list[dict[str, Any]], vision: bool = True) -> str | None:
    """What OpenAI would answer 400 about in the messages' content parts (None: nothing): parts are
    `text` (with a string) or `image_url` (an http(s) URL or a base64 data URL of a png, jpeg, gif
    or webp image whose bytes are that format), images only in user messages of a vision model."""
    import base64
    import binascii

    for i, message in enumerate(messages):
        parts = message.get("content")
        if not isinstance(parts, list):
            continue
        for j, part in enumerate(parts):
            where = f"messages.[{i}].content.[{j}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str) or kind in ("input_audio", "file", "refusal"):
                continue
            if kind != "image_url":
                return (f"Invalid value for '{where}.type': expected one of 'text', 'image_url', 'input_audio', "
                        "'file' or 'refusal'.")
            if not vision:
                return "Invalid content type. image_url is only supported by certain models."
            if message.get("role") != "user":
                return f"Invalid '{where}': image URLs are only allowed for messages with role 'user'."
            url = (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
            if not isinstance(url, str) or not url.startswith(("http://", "https://", "data:")):
                return f"Invalid '{where}.image_url.url': expected a URL or a base64 data URL."
            if url.startswith("data:"):
                head, _, data = url.partition(",")
                fmt = head.removeprefix("data:image/").removesuffix(";base64")
                try:
                    raw = base64.b64decode(data, validate=True)
                except (binascii.Error, ValueError):
                    return "Invalid image data: the base64 could not be decoded."
                if fmt not in IMAGE_MAGIC or not head.endswith(";base64") or not raw.startswith(IMAGE_MAGIC[fmt]):
                    return ("You uploaded an unsupported image. Please make sure your image has of one the "
                            "following formats: ['png', 'jpeg', 'gif', 'webp'].")
    return None


def images_in(body: dict[str, Any]) -> list[str]:
    """The image URLs of a recorded request, in order."""
    return [p["image_url"]["url"] for m in body.get("messages", []) if isinstance(m.get("content"), list)
            for p in m["content"] if isinstance(p, dict) and p.get("type") == "image_url"]


def _tool_loop_responder(steps: int) -> Callable[[dict[str, Any]], Reply]:
    """Answers with a read_file call `steps` times per conversation, then with text."""

    def results(message: dict[str, Any]) -> int:
        if message.get("role") == "tool":  # OpenAI and Ollama
            return 1
        content = message.get("content")  # Anthropic: tool_result blocks in a user message
        return sum(1 for b in content if b.get("type") == "tool_result") if isinstance(content, list) else 0

    def respond(body: dict[str, Any]) -> Reply:
        done = sum(results(m) for m in body.get("messages", []))
        if done >= steps:
            return Reply(text="done", usage=(100, 1))
        return Reply(tool_calls=[call("read_file", file_path="a.py")], usage=(100, 10))

    return respond


def _serve(steps: int, wire: str) -> None:
    """A separate server process for benchmarks: prints its URL, serves until killed."""
    from tests.fake_anthropic import FakeAnthropic
    from tests.fake_ollama import FakeOllama

    kind = {"openai": FakeLLM, "anthropic": FakeAnthropic, "ollama": FakeOllama}[wire]
    server = kind(responder=_tool_loop_responder(steps)).start()
    print(server.url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":  # python -m tests.fakellm [STEPS] [openai|anthropic|ollama]
    import sys

    _serve(int(sys.argv[1]) if len(sys.argv) > 1 else 200, sys.argv[2] if len(sys.argv) > 2 else "openai")
