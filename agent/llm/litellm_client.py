"""The litellm path: every provider without a built-in client (Bedrock, Vertex, Azure, Gemini's
native API, Cohere, ...), and any model when the user chooses it (`model_path = "litellm"`).

litellm is imported the first time a request or a check needs it (about 3 s of CPU and 200 MiB:
agent/llm/preload.py imports it, early and in a thread when the configured model takes this path).
Requests run on the thread of agent/llm/requestloop.py; the stream is read into the same
ModelReply the built-in clients make.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent.llm.litellm_errors import classify
from agent.llm.preload import is_loaded, load_litellm, start_loading
from agent.llm.reasoning import request_args
from agent.llm.request import Request
from agent.llm.types import ModelReply, Retryable, TextHook, ToolCallRequest

async def ensure_loaded() -> Any:
    """litellm, imported in a worker thread the first time so the event loop never stalls."""
    if not is_loaded():
        await asyncio.wrap_future(start_loading())
    return load_litellm()


def args(request: Request, stream: bool = True) -> dict[str, Any]:
    llm = request
    out: dict[str, Any] = {"model": llm.model, "timeout": llm.timeout, "num_retries": 0, "max_retries": 0}
    if stream:
        out.update(stream=True, stream_options={"include_usage": True})
    if llm.max_tokens:
        out["max_tokens"] = llm.max_tokens
    if llm.api_base:
        out["api_base"] = llm.api_base
    if request.key:
        out["api_key"] = request.key
    return out


async def attempt(request: Request, on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
    """One request through litellm (on the request thread: the caller hands the hooks over)."""
    litellm = await ensure_loaded()
    stream = None
    try:
        stream = await litellm.acompletion(messages=request.messages, tools=request.tools or None, **args(request),
                                           **request_args(request.reasoning, request.model))
        return await _consume(stream, request.timeout, on_text, on_reasoning)
    except (Retryable, asyncio.CancelledError):
        if _cancelling():
            raise asyncio.CancelledError() from None
        raise
    except Exception as exc:  # noqa: BLE001 - classified below
        if _cancelling():  # litellm turns an interrupted read into its own errors
            raise asyncio.CancelledError() from None
        from agent.llm.http import raise_failure

        raise_failure(classify(exc, litellm, request.place, streaming=stream is not None))
        raise  # unreachable: raise_failure always raises


async def check(request: Request) -> str:
    """One small non-streaming request through litellm: proves model, address and key work."""
    from agent.llm.errors import LLMError

    litellm = await ensure_loaded()
    try:
        response = await litellm.acompletion(messages=request.messages, max_tokens=5, **args(request, stream=False))
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message
        failure = classify(exc, litellm, request.place)
        raise LLMError(failure.message, failure.kind) from None
    return response.choices[0].message.content or ""


async def _consume(stream: Any, timeout: float, on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
    reply = ModelReply()
    calls: dict[int, ToolCallRequest] = {}
    iterator = stream.__aiter__()
    try:
        while True:
            try:
                # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
                async with asyncio.timeout(timeout):
                    chunk = await iterator.__anext__()
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise Retryable(f"the model sent nothing for {timeout:g} s", kind="timeout") from None
            _absorb(chunk, reply, calls, on_text, on_reasoning)
            # Usage comes last: reading on only makes litellm finish the stream a second time.
            if reply.finish_reason and reply.usage_seen:
                break
    finally:
        await _close_stream(stream)
    reply.tool_calls = [calls[i] for i in sorted(calls)]
    return reply


def _absorb(chunk: Any, reply: ModelReply, calls: dict[int, ToolCallRequest], on_text: TextHook,
            on_reasoning: TextHook) -> None:
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
        entry.id = tc.id or entry.id
        if tc.function is not None:
            entry.name = tc.function.name or entry.name
            entry.arguments += tc.function.arguments or ""


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


def unroutable(model: str) -> bool:
    """litellm cannot place `model` at all (an unknown provider). Needs litellm loaded."""
    try:
        load_litellm().get_llm_provider(model)
    except Exception:  # noqa: BLE001 - litellm raises BadRequestError, or ValueError for odd strings
        return True
    return False
