"""The only way to the model: litellm's `acompletion`, imported lazily.

Streams text and tool-call deltas, retries what is worth retrying (rate limits, connection
errors, timeouts, 5xx) with backoff, and turns everything else into an `LLMError` whose message
says what to fix. Usage and cost per call come from litellm.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import random
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.secrets import redact

TextHook = Callable[[str], None]
RetryHook = Callable[[str, int, float], None]  # (why, attempt, delay)


_warm = False


def load_litellm() -> Any:
    """Import litellm with its network-free cost map and quiet defaults."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    litellm.telemetry = False
    # We register no litellm loggers or caches; skip its per-stream logging thread work.
    litellm.disable_streaming_logging = True
    return litellm


def prewarm() -> None:
    """Import litellm and what its first request imports (about 3 s and 500 modules together).

    The OpenAI client's `.chat` imports `openai.resources`, whose __init__ loads every API
    resource; done on the event loop that stalls a UI or a room for about a second.
    """
    global _warm
    load_litellm()
    import openai.resources  # noqa: F401

    _warm = True


class _RequestLoop:
    """One daemon thread with its own event loop, where every model request runs.

    Preparing a request walks the whole conversation in the OpenAI SDK's pure-Python transforms
    (about 0.3 s for a 500-turn history) and parsing streamed chunks takes time too: on the
    caller's loop that stalls a UI, a room's document sync or another run. The caller awaits
    the result; streamed text is handed back to its loop in order; cancelling the caller
    cancels the request.

    At exit the thread's work is wound down before the interpreter finalizes: a daemon thread
    frozen there while it holds an import lock (litellm imports lazily mid-request) deadlocks
    the finalizers that import, and the process never ends.
    """

    _instance: _RequestLoop | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="model-requests", daemon=True)
        self.thread.start()
        atexit.register(self.shutdown)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Cancel what still runs on the thread, wait for it, and stop the thread."""
        with self._lock:
            if _RequestLoop._instance is self:
                _RequestLoop._instance = None
        if not self.thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(_wind_down(), self.loop).result(timeout)
        except Exception:  # noqa: BLE001 - exiting anyway; the thread is stopped below
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)

    @classmethod
    def get(cls) -> _RequestLoop:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    async def run(self, coroutine: Any) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))


async def _wind_down() -> None:
    """Cancel every other task on this loop and wait for them and the loop's worker threads."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    loop = asyncio.get_running_loop()
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()


def _on_caller_loop(hook: TextHook) -> TextHook:
    """`hook`, called on the current loop whichever thread calls the returned function."""
    loop = asyncio.get_running_loop()
    return lambda text: loop.call_soon_threadsafe(hook, text)


async def ensure_loaded() -> Any:
    """litellm, imported in a worker thread the first time so the event loop never stalls."""
    if not _warm:
        await asyncio.to_thread(prewarm)
    return load_litellm()


class LLMError(Exception):
    """The model could not be reached or refused the request; the message says why.

    `kind` lets a caller choose another model: `gave_up` (still failing after the retries),
    `too_long` (the request does not fit the context window), or `other`.
    """

    def __init__(self, message: str, kind: str = "other") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass
class ModelReply:
    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    finish_reason: str | None = None


class _Retryable(Exception):
    def __init__(self, why: str, retry_after: float | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.retry_after = retry_after


@dataclass
class LLM:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    key_variable: str | None = None

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: TextHook,
        on_retry: RetryHook,
    ) -> ModelReply:
        attempt = 0
        requests, deliver = _RequestLoop.get(), _on_caller_loop(on_text)
        while True:
            try:
                reply = await requests.run(self._attempt(messages, tools, deliver))
                await asyncio.sleep(0)  # the text delivered before the reply is handled first
                return reply
            except _Retryable as exc:
                if attempt >= self.max_retries:
                    raise LLMError(f"{exc.why} (gave up after {attempt + 1} attempts)", "gave_up") from None
                attempt += 1
                delay = self._delay(attempt, exc.retry_after)
                on_retry(exc.why, attempt, delay)
                await asyncio.sleep(delay)

    async def check(self) -> str:
        """One small non-streaming request: proves model, address and key work."""
        await ensure_loaded()
        return await _RequestLoop.get().run(self._check())

    async def _check(self) -> str:
        litellm = load_litellm()
        try:
            response = await litellm.acompletion(
                messages=[{"role": "user", "content": "Reply with the word OK."}],
                max_tokens=5, **self._request_args(stream=False),
            )
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message
            raise LLMError(self._describe(exc, litellm)) from None
        return response.choices[0].message.content or ""

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), 60.0)
        backoff = self.retry_base_delay * (2 ** (attempt - 1))
        return min(backoff * (1 + random.random() * 0.1), 30.0)

    def _request_args(self, stream: bool) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.model, "timeout": self.timeout, "num_retries": 0, "max_retries": 0,
        }
        if stream:
            args.update(stream=True, stream_options={"include_usage": True})
        if self.api_base:
            args["api_base"] = self.api_base
        if self.api_key:
            args["api_key"] = self.api_key
        return args

    async def _attempt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                       on_text: TextHook) -> ModelReply:
        litellm = await ensure_loaded()
        try:
            stream = await litellm.acompletion(messages=messages, tools=tools or None,
                                               **self._request_args(stream=True))
            return await self._consume(stream, on_text)
        except (_Retryable, asyncio.CancelledError):
            if _cancelling():
                raise asyncio.CancelledError() from None
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            if _cancelling():  # litellm turns an interrupted read into its own errors
                raise asyncio.CancelledError() from None
            retry = self._retryable(exc, litellm)
            if retry is not None:
                raise retry from None
            too_long = isinstance(exc, litellm.exceptions.ContextWindowExceededError)
            raise LLMError(self._describe(exc, litellm), "too_long" if too_long else "other") from None

    async def _consume(self, stream: Any, on_text: TextHook) -> ModelReply:
        reply = ModelReply()
        calls: dict[int, ToolCallRequest] = {}
        iterator = stream.__aiter__()
        try:
            while True:
                try:
                    # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
                    async with asyncio.timeout(self.timeout):
                        chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise _Retryable(f"the model sent nothing for {self.timeout:g} s") from None
                self._absorb(chunk, reply, calls, on_text)
        finally:
            await _close_stream(stream)
        reply.tool_calls = [calls[i] for i in sorted(calls)]
        for index, call in enumerate(reply.tool_calls):
            call.id = call.id or f"call_{uuid.uuid4().hex[:12]}_{index}"
        reply.cost = self._cost(reply)
        return reply

    @staticmethod
    def _absorb(chunk: Any, reply: ModelReply, calls: dict[int, ToolCallRequest],
                on_text: TextHook) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            reply.prompt_tokens = usage.prompt_tokens or 0
            reply.completion_tokens = usage.completion_tokens or 0
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        if choice.finish_reason:
            reply.finish_reason = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return
        if delta.content:
            reply.text += delta.content
            on_text(delta.content)
        for tc in getattr(delta, "tool_calls", None) or []:
            index = tc.index if tc.index is not None else len(calls)
            entry = calls.setdefault(index, ToolCallRequest(id="", name="", arguments=""))
            if tc.id:
                entry.id = tc.id
            function = tc.function
            if function is not None:
                if function.name:
                    entry.name = function.name
                if function.arguments:
                    entry.arguments += function.arguments

    def _cost(self, reply: ModelReply) -> float | None:
        if not (reply.prompt_tokens or reply.completion_tokens):
            return None
        litellm = load_litellm()
        try:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=self.model, prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
            )
        except Exception:  # noqa: BLE001 - unknown models have no price
            return None
        return float(prompt_cost + completion_cost)

    @staticmethod
    def _retryable(exc: Exception, litellm: Any) -> _Retryable | None:
        errors = litellm.exceptions
        if isinstance(exc, errors.ContextWindowExceededError):
            return None
        status = getattr(exc, "status_code", None)
        transient = (errors.RateLimitError, errors.APIConnectionError, errors.Timeout,
                     errors.InternalServerError, errors.ServiceUnavailableError, errors.BadGatewayError)
        if isinstance(exc, transient) or (isinstance(status, int) and status >= 500):
            return _Retryable(f"{_short_kind(exc)}: {_first_line(exc)}", _retry_after(exc))
        return None

    def _describe(self, exc: Exception, litellm: Any) -> str:
        errors = litellm.exceptions
        if isinstance(exc, (errors.AuthenticationError, errors.PermissionDeniedError)):
            var = self.key_variable or "the provider's API key variable"
            return redact(
                f"authentication failed for {self.model}: set {var} or CODER_TUI_API_KEY, "
                f"or pass --api-key ({_first_line(exc)})"
            )
        if isinstance(exc, errors.ContextWindowExceededError):
            return (f"the conversation no longer fits {self.model}'s context window; "
                    "start a new session (or /clear in the app) and give a narrower task")
        if isinstance(exc, errors.NotFoundError):
            return redact(f"model {self.model} was not found at the provider: {_first_line(exc)}")
        if isinstance(exc, errors.BadRequestError) and "LLM Provider NOT provided" in str(exc):
            return (f"litellm does not know the provider of model {self.model!r}: use a provider "
                    "prefix such as openai/, anthropic/, ollama_chat/ (see litellm's provider list)")
        return redact(f"{_short_kind(exc)}: {_first_line(exc)}")


_KINDS = {
    "RateLimitError": "rate limited", "APIConnectionError": "connection error", "Timeout": "timed out",
    "InternalServerError": "server error", "ServiceUnavailableError": "service unavailable",
    "BadGatewayError": "bad gateway", "MidStreamFallbackError": "the stream broke off",
}
_NOISE = re.compile(r"\b(?:litellm\.|OpenAIException - |[A-Z]\w*(?:Error|Exception|Timeout): )")


def _short_kind(exc: Exception) -> str:
    return _KINDS.get(type(exc).__name__, type(exc).__name__)


def _first_line(exc: Exception) -> str:
    """The provider's message without litellm's repeated class-name prefixes."""
    text = (str(exc).strip() or type(exc).__name__).split(" Original exception")[0]
    text = _NOISE.sub("", text).strip()
    return redact((text.splitlines() or [type(exc).__name__])[0][:300])


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _retry_after(exc: Exception) -> float | None:
    headers = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    headers = headers or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


async def _close_stream(stream: Any) -> None:
    """Release the HTTP connection behind a stream (also when it was cancelled)."""
    for owner in (stream, getattr(stream, "completion_stream", None), getattr(stream, "response", None)):
        closer = getattr(owner, "aclose", None)
        if closer is None:
            continue
        try:
            await asyncio.shield(closer())
        except Exception:  # noqa: BLE001 - best effort on a dead connection
            pass
        return
