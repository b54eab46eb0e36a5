"""The only way to the model: litellm's `acompletion`, imported lazily.

Streams text and tool-call deltas, retries what is worth retrying (rate limits, connection
errors, timeouts, 5xx) with backoff, and turns everything else into an `LLMError` whose message
says what to fix (agent/llm_errors.py). Usage per call is the provider's, read through litellm;
prompt-cache markers and cost come from agent/llm_usage.py.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import random
import threading
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent import secrets, toolschema
from agent.llm_errors import Failure, LLMError, classify, unknown_provider, where
from agent.llm_lean import encoding_on_first_use, no_proxy_import_without_file_ids
from agent.llm_preload import collections_paused, start_loading
from agent.llm_requests import copy_messages_without_signature_scan, no_price_for_a_stream_not_read_yet
from agent.llm_usage import (Prices, cap_cache_marks_only_when_over, caches_prompts, prices_for,
                             strip_cache_control_only_when_marked, usage_without_assembly, with_cache_markers)
from agent.llm_errors import gave_up, waiting
from agent.reasoning import ThinkingCollector, estimated_tokens, for_request, request_args

__all__ = ["LLM", "LLMError", "ModelReply", "Retryable", "ToolCallRequest", "configuration_problem", "ensure_loaded",
           "is_loaded", "on_caller_loop", "prewarm", "request_loop"]

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
    # litellm prices every streamed request on arrival by tokenizing the whole conversation
    # (before any usage exists): O(history) per step, for a number nobody reads. Usage comes
    # from the provider; when it does not, litellm no longer estimates it (we show 0).
    litellm.disable_token_counter = True
    # Responses-API models (openai/gpt-5-codex, ...): a request with a reasoning effort also asks
    # for the reasoning summary, which litellm streams back as reasoning_content.
    litellm.reasoning_auto_summary = True
    # litellm's Responses bridge puts Chat usage where its model expects Responses usage, and
    # pydantic warns on stderr at every reply (over the app's screen, into `run`'s output).
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
    return litellm


def prewarm() -> None:
    """Import litellm and what its first request imports (about 3 s and 500 modules together).

    The OpenAI client's `.chat` imports `openai.resources`, whose __init__ loads every API
    resource; done on the event loop that stalls a UI or a room for about a second. Once per
    process: a second caller waits for the first (agent/llm_preload.py starts it early).
    """
    global _warm
    with _prewarming:
        if _warm:
            return
        with collections_paused():
            load_litellm()
            import openai.resources  # noqa: F401

            strip_cache_control_only_when_marked()
            cap_cache_marks_only_when_over()
            copy_messages_without_signature_scan()
            no_price_for_a_stream_not_read_yet()
            no_proxy_import_without_file_ids()
            encoding_on_first_use()
        _warm = True


_prewarming = threading.Lock()


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

    The loop runs one long-lived host task (run_until_complete, not run_forever): AnyIO, which
    litellm uses to assemble a finished stream in a worker thread (when
    llm_usage.usage_without_assembly does not apply), keeps its idle worker
    threads for the life of the loop's root task. Without one, each request is its own root and
    every call started (and stopped) a new thread, about 2 ms a step.
    """

    _instance: _RequestLoop | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._finished = self.loop.create_future()
        self._host = self.loop.create_task(_host(self._finished), name="model-requests-host")
        self.thread = threading.Thread(target=self._serve, name="model-requests", daemon=True)
        self.thread.start()
        atexit.register(self.shutdown)

    def _serve(self) -> None:
        self.loop.run_until_complete(self._host)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Cancel what still runs on the thread, wait for it, and stop the thread."""
        with self._lock:
            if _RequestLoop._instance is self:
                _RequestLoop._instance = None
        if not self.thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(_wind_down(self._host), self.loop).result(timeout)
        except Exception:  # noqa: BLE001 - exiting anyway; the thread is stopped below
            pass
        self.loop.call_soon_threadsafe(_settle, self._finished)
        self.thread.join(timeout)

    @classmethod
    def get(cls) -> _RequestLoop:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    async def run(self, coroutine: Any) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))


async def _host(finished: asyncio.Future[None]) -> None:
    await finished


async def _wind_down(host: asyncio.Task[None]) -> None:
    """Cancel every request on this loop and wait for them and the loop's worker threads."""
    requests = [t for t in asyncio.all_tasks() if t not in (host, asyncio.current_task())]
    for task in requests:
        task.cancel()
    await asyncio.gather(*requests, return_exceptions=True)
    loop = asyncio.get_running_loop()
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def on_caller_loop(hook: TextHook) -> TextHook:
    """`hook`, called on the current loop whichever thread calls the returned function."""
    loop = asyncio.get_running_loop()
    return lambda text: loop.call_soon_threadsafe(hook, text)


def request_loop() -> _RequestLoop:
    """The thread where model requests run (a host lends it to clients: agent/host/lending.py)."""
    return _RequestLoop.get()


def is_loaded() -> bool:
    """litellm and what its first request imports are loaded (prewarm finished)."""
    return _warm


async def ensure_loaded() -> Any:
    """litellm, imported in a worker thread the first time so the event loop never stalls."""
    if not _warm:
        await asyncio.wrap_future(start_loading())
    return load_litellm()


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass
class ModelReply:
    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    prompt_tokens: int = 0  # all of the prompt, cached or not
    completion_tokens: int = 0
    cache_read_tokens: int = 0  # prompt tokens read from the provider's prompt cache
    cache_write_tokens: int = 0  # prompt tokens written to it
    cost: float | None = None
    finish_reason: str | None = None
    usage_seen: bool = False
    reasoning_tokens: int = 0  # of completion_tokens (agent/reasoning.py)
    thinking: ThinkingCollector = field(default_factory=ThinkingCollector)


class Retryable(Exception):
    def __init__(self, why: str, retry_after: float | None = None, kind: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.retry_after = retry_after
        self.kind = kind


async def configuration_problem(model: str, borrow: bool = True) -> str | None:
    """Why litellm cannot route `model` at all (an unknown provider), checked before any request
    (read by a warm session host while litellm loads here, unless `borrow` is False)."""
    from agent.modelfacts import lent_facts

    lent = await lent_facts(model, borrow)
    if lent is not None:
        return lent.problem
    litellm = await ensure_loaded()
    try:
        litellm.get_llm_provider(model)
    except Exception:  # noqa: BLE001 - litellm raises BadRequestError, or ValueError for odd strings
        return unknown_provider(model)
    return None


MAX_WAIT = 30.0  # seconds of a provider's retry-after worth waiting for; longer: say when to retry
NO_KEY = "no-key"  # sent to a keyless OpenAI-compatible server, which ignores it


def keyless_server(model: str, api_base: str | None) -> bool:
    """An OpenAI-compatible server at an address of the user's (`openai/NAME` with an API base): a
    local server needs no key, so none is required (the request sends NO_KEY; a server that wants
    one answers 401, which says so). One rule for the requests and the app's setup check."""
    return bool(api_base) and model.startswith("openai/")


@dataclass
class LLM:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    key_variable: str | None = None
    reasoning: str = "off"  # agent/reasoning.py LEVELS
    borrow: bool = False  # while litellm loads here, a warm session host may make the request (agent/llm_borrow.py)

    def __post_init__(self) -> None:
        secrets.register(self.api_key)  # providers quote keys back in their errors
        # the output limit sent (None: the provider's or litellm's default; agent/replies.py raises it)
        self.max_tokens: int | None = None

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: TextHook,
        on_retry: RetryHook,
        on_reasoning: TextHook | None = None,
    ) -> ModelReply:
        attempt = 0
        requests, deliver = _RequestLoop.get(), on_caller_loop(on_text)
        think = on_caller_loop(on_reasoning or (lambda _text: None))
        messages = for_request(messages, self.model, self.reasoning)
        if caches_prompts(self.model):
            messages, tools = with_cache_markers(messages, tools)
        fitted = toolschema.fit(self.model, messages, tools)  # names, ids, schemas this provider accepts
        messages, tools = fitted.messages, fitted.tools
        while True:
            try:
                reply = await self._borrowed(messages, tools, deliver, think)
                if reply is None:
                    reply = await requests.run(self.attempt_once(messages, tools, deliver, think))
                await asyncio.sleep(0)  # the text delivered before the reply is handled first
                fitted.restore(reply.tool_calls)
                return reply
            except Retryable as exc:
                too_long = exc.retry_after is not None and exc.retry_after > MAX_WAIT
                if attempt >= self.max_retries or too_long:
                    place = f"{self.model} at {where(self.model, self.api_base)}"
                    raise LLMError(gave_up(exc.why, place, attempt + 1, exc.retry_after if too_long else None,
                                           exc.kind), "gave_up") from None
                attempt += 1
                delay = self._delay(attempt, exc.retry_after)
                on_retry(waiting(exc.why, exc.retry_after), attempt, delay)
                await asyncio.sleep(delay)

    async def _borrowed(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: TextHook,
                        on_reasoning: TextHook) -> ModelReply | None:
        """The reply made by a warm session host while litellm still loads here (None: make it here)."""
        if not self.borrow or _warm:
            return None
        from agent.llm_borrow import borrowed

        return await borrowed(self, messages, tools, on_text, on_reasoning)

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
            failure = self._classify(exc, litellm)
            raise LLMError(failure.message, failure.kind) from None
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
            if self.max_tokens:
                args["max_tokens"] = self.max_tokens
        if self.api_base:
            args["api_base"] = self.api_base
        if self.api_key:
            args["api_key"] = self.api_key
        elif self._keyless_server():
            args["api_key"] = NO_KEY
        return args

    def _keyless_server(self) -> bool:
        """An OpenAI-compatible server at --api-base with no key anywhere: a local server needs none
        (the OpenAI client refuses to send without one; a server that wants one answers 401)."""
        return keyless_server(self.model, self.api_base) and not os.environ.get("OPENAI_API_KEY")

    def _classify(self, exc: Exception, litellm: Any, streaming: bool = False) -> Failure:
        return classify(exc, litellm, self.model, self.api_base, self.key_variable, streaming)

    async def attempt_once(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                       on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
        litellm = await ensure_loaded()
        stream = None
        try:
            stream = await litellm.acompletion(messages=messages, tools=tools or None, **self._request_args(stream=True),
                                               **request_args(self.reasoning, self.model))
            usage_without_assembly(stream)
            return await self._consume(stream, on_text, on_reasoning)
        except (Retryable, asyncio.CancelledError):
            if _cancelling():
                raise asyncio.CancelledError() from None
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            if _cancelling():  # litellm turns an interrupted read into its own errors
                raise asyncio.CancelledError() from None
            failure = self._classify(exc, litellm, streaming=stream is not None)
            if failure.retryable:
                raise Retryable(failure.message, failure.retry_after, failure.kind) from None
            raise LLMError(failure.message, failure.kind) from None

    async def _consume(self, stream: Any, on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
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
                    raise Retryable(f"the model sent nothing for {self.timeout:g} s") from None
                self._absorb(chunk, reply, calls, on_text, on_reasoning)
                # Usage comes last: reading on only makes litellm finish the stream a second time
                # and run its success logging, several milliseconds a step.
                if reply.finish_reason and reply.usage_seen:
                    break
        finally:
            await _close_stream(stream)
        reply.tool_calls = [calls[i] for i in sorted(calls)]
        reply.reasoning_tokens = reply.reasoning_tokens or estimated_tokens(reply.thinking.text, reply.completion_tokens)
        for index, call in enumerate(reply.tool_calls):
            call.id = call.id or f"call_{uuid.uuid4().hex[:12]}_{index}"
        reply.cost = self._cost(reply)
        return reply

    @staticmethod
    def _absorb(chunk: Any, reply: ModelReply, calls: dict[int, ToolCallRequest],
                on_text: TextHook, on_reasoning: TextHook) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            _read_usage(usage, reply)
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        if choice.finish_reason:
            reply.finish_reason = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return
        if thought := reply.thinking.absorb(delta):
            on_reasoning(thought)
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
        prices = _prices(self.model)
        if prices is None:
            return None
        return prices.cost(reply.prompt_tokens, reply.completion_tokens, reply.cache_read_tokens,
                           reply.cache_write_tokens)


def _read_usage(usage: Any, reply: ModelReply) -> None:
    reply.usage_seen = True
    reply.prompt_tokens = usage.prompt_tokens or 0
    reply.completion_tokens = usage.completion_tokens or 0
    details = getattr(usage, "prompt_tokens_details", None)
    # litellm reports cache reads as OpenAI's cached_tokens for every provider, and Anthropic's
    # cache writes as cache_creation_input_tokens.
    reply.cache_read_tokens = int(getattr(details, "cached_tokens", None) or 0)
    reply.cache_write_tokens = int(getattr(usage, "cache_creation_input_tokens", None) or 0)
    thought = getattr(usage, "completion_tokens_details", None)
    reply.reasoning_tokens = int(getattr(thought, "reasoning_tokens", None) or 0)


def model_prices(model: str) -> Prices | None:
    """The model's prices per token (None: litellm cannot price it, so no cost is counted)."""
    return _prices(model)


@functools.lru_cache(maxsize=32)
def _prices(model: str) -> Prices | None:
    return prices_for(model, load_litellm().model_cost)


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


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
