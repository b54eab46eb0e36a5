"""Prompt caching and what a reply cost.

Anthropic caches a prompt prefix only up to `cache_control` breakpoints that the request marks,
and allows four. Without them a long session pays the full input price for the whole
conversation on every step. `with_cache_markers` marks copies (the conversation itself stays
as it is): the last tool (the tools come first in Anthropic's prefix), the system prompt, the
message that ended the previous request (so the prefix cached then is read now, however many
tool results were added since) and the last message (written now, read by the next step).

Cost is computed here from litellm's model cost map, with cache reads and writes at their own
prices: litellm's per-call cost path costs milliseconds a step; this is a dictionary lookup.
For the same reason litellm's end of stream computes only the usage (`usage_without_assembly`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

EPHEMERAL = {"type": "ephemeral"}
CACHING_PROVIDERS = frozenset({"anthropic"})
LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat", "lm_studio", "llamafile"})  # free to run: cost 0


def provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


def caches_prompts(model: str) -> bool:
    return provider(model) in CACHING_PROVIDERS


def with_cache_markers(messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of the request's messages and tools with at most four cache breakpoints."""
    marked = list(messages)
    targets = {len(marked) - 1, _previous_end(marked)}
    if marked and marked[0].get("role") == "system":
        targets.add(0)
    for index in sorted(i for i in targets if i >= 0):
        marked[index] = _marked(marked[index])
    tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}] if tools else tools
    return marked, tools


def _previous_end(messages: list[dict[str, Any]]) -> int:
    """The index of the last message of the previous request: the one before the last answer."""
    for index in range(len(messages) - 2, 0, -1):
        if messages[index].get("role") == "assistant":
            return index - 1
    return -1


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if message.get("role") == "tool":
        return {**message, "cache_control": EPHEMERAL}
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content, "cache_control": EPHEMERAL}]}
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": EPHEMERAL}]}
    calls = message.get("tool_calls")
    if calls:
        return {**message, "tool_calls": [*calls[:-1], {**calls[-1], "cache_control": EPHEMERAL}]}
    return message


@dataclass(frozen=True)
class Prices:
    """Dollars per token."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, prompt: int, completion: int, cache_read: int = 0, cache_write: int = 0) -> float:
        uncached = max(0, prompt - cache_read - cache_write)
        return (uncached * self.input + cache_read * self.cache_read + cache_write * self.cache_write
                + completion * self.output)


FREE = Prices(0.0, 0.0, 0.0, 0.0)


def prices_for(model: str, cost_map: dict[str, Any]) -> Prices | None:
    """The model's prices from litellm's cost map (None: unknown, so no cost is shown)."""
    name = model.split("/", 1)[1] if "/" in model else model
    entry = cost_map.get(model) or cost_map.get(name)
    if not entry or entry.get("input_cost_per_token") is None:
        return FREE if provider(model) in LOCAL_PROVIDERS else None
    base = float(entry["input_cost_per_token"])
    read, write = entry.get("cache_read_input_token_cost"), entry.get("cache_creation_input_token_cost")
    return Prices(base, float(entry.get("output_cost_per_token") or 0.0),
                  float(read) if read is not None else base, float(write) if write is not None else base)


# litellm versions `usage_without_assembly`, `strip_cache_control_only_when_marked` and
# `cap_cache_marks_only_when_over` were checked
# against (pyproject pins litellm>=1.106,<1.110); tests/core/test_llm_overhead.py fails when what
# they replace is gone or no longer used.
_LITELLM_CHECKED = ((1, 106), (1, 110))


def usage_without_assembly(stream: Any) -> None:
    """Make litellm's end of stream compute usage only, not the whole answer again.

    At the end of a stream litellm hands the chunks to an AnyIO worker thread to assemble the
    complete answer (content, tool calls) and price it, only to take the usage off it for the
    usage chunk it yields. agent/llm.py assembles the answer itself and prices it here from the
    provider's usage: that is a thread hand-off, a second assembly and a cost calculation a step
    for nothing. The usage is computed by the same litellm routine its
    assembler uses (Anthropic cache fields included), on this loop. Only this stream's method
    is replaced; any failure falls back to litellm's own.
    """
    real = getattr(stream, "_async_build_complete_streaming_response", None)
    chunks = getattr(stream, "chunks", None)
    if real is None or not isinstance(chunks, list) or not _litellm_checked():
        return

    async def usage_only() -> Any:
        try:
            return _usage_response(stream)
        except Exception:  # noqa: BLE001 - odd chunks: litellm's full assembly handles them
            return await real()

    stream._async_build_complete_streaming_response = usage_only


@functools.lru_cache(maxsize=1)
def _litellm_checked() -> bool:
    from importlib.metadata import version

    found = tuple(int(part) for part in version("litellm").split(".")[:2])
    return _LITELLM_CHECKED[0] <= found < _LITELLM_CHECKED[1]


def _usage_response(stream: Any) -> Any:
    """A response carrying only the usage litellm's assembler would have put on it."""
    from litellm import ModelResponse
    from litellm.litellm_core_utils.streaming_chunk_builder_utils import ChunkProcessor

    if not stream.chunks:
        return None
    processor = ChunkProcessor(stream.chunks)
    model = processor.chunks[0]["model"]
    usage = processor.calculate_usage(
        chunks=processor.chunks, model=model, completion_output=stream.response_uptil_now,
        messages=None, reasoning_tokens=0, count_prompt_tokens=stream.count_prompt_tokens)
    response = ModelResponse(model=model)
    response.usage = usage
    return response


def strip_cache_control_only_when_marked() -> None:
    """Let litellm's OpenAI-format requests skip their cache_control strip when nothing is marked.

    Before every OpenAI-format request litellm looks for `cache_control` in every message and
    tool schema, through runtime Protocol checks that make it about a millisecond a step and
    grow with the conversation. We mark only Anthropic requests (`with_cache_markers`), so on
    these routes there is nothing to strip: a plain scan of the JSON finds that far sooner.
    Anything marked, or not plain JSON, still goes through litellm's own strip, which returns
    the same lists (of the same objects) when it has nothing to remove.
    """
    if not _litellm_checked():
        return
    from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig

    real = OpenAIGPTConfig.remove_cache_control_flag_from_messages_and_tools
    if getattr(real, "skips_unmarked", False):
        return

    def strip(self: Any, model: str, messages: list[Any], tools: list[Any] | None = None) -> Any:
        if _may_be_marked(messages) or _may_be_marked(tools):
            return real(self, model, messages, tools)
        return list(messages), (list(tools) if tools is not None else None)

    strip.skips_unmarked = True  # type: ignore[attr-defined]
    OpenAIGPTConfig.remove_cache_control_flag_from_messages_and_tools = strip  # type: ignore[method-assign]


def cap_cache_marks_only_when_over() -> None:
    """Let litellm's Anthropic requests skip their cache_control cap when it cannot bite.

    With drop_params on, litellm counts the cache_control marks of every message (pydantic
    validation of each message and block) to drop the oldest beyond Anthropic's four: about
    6 ms a step at 100 turns, growing with the conversation. `with_cache_markers` places at
    most four, so there is nothing to drop. When a plain scan of the JSON counts no more
    marks (every key either provider reads, anywhere) than the cap leaves after the tools' and
    top-level ones, the messages go on as they are, as litellm's own cap would send them.
    """
    if not _litellm_checked():
        return
    from litellm.integrations.anthropic_cache_control_hook import (
        CACHE_BREAKPOINT_KEYS, MAX_CACHE_CONTROL_BLOCKS, AnthropicCacheControlHook)
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    real = AnthropicConfig._messages_within_cache_control_cap
    if getattr(real, "skips_within_cap", False):
        return
    keys = frozenset(CACHE_BREAKPOINT_KEYS)

    def cap(messages: Any, optional_params: Any) -> Any:
        marks = _marks_at_most(messages, keys, MAX_CACHE_CONTROL_BLOCKS)
        if marks is not None:
            reserved = AnthropicCacheControlHook.count_external_cache_breakpoints(
                optional_params.get("tools"), optional_params.get("cache_control"), optional_params)
            if marks + reserved <= MAX_CACHE_CONTROL_BLOCKS:
                return tuple(messages)
        return real(messages, optional_params)

    cap.skips_within_cap = True  # type: ignore[attr-defined]
    AnthropicConfig._messages_within_cache_control_cap = staticmethod(cap)  # type: ignore[method-assign,assignment]


_SCALARS = (str, int, float, bool, type(None))
_CACHE_CONTROL = frozenset({"cache_control"})


def _marks_at_most(value: Any, keys: frozenset[str], limit: int) -> int | None:
    """How many `keys` plain JSON `value` holds; None past `limit` or for anything not plain JSON."""
    found, pending = 0, [value]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is dict:
            found += sum(1 for key in keys if key in node)
            if found > limit:
                return None
            pending.extend(node.values())
        elif kind is list or kind is tuple:
            pending.extend(node)
        elif kind not in _SCALARS:
            return None
    return found


def _may_be_marked(value: Any) -> bool:
    """Whether plain JSON `value` holds a `cache_control` key; True for anything else."""
    return _marks_at_most(value, _CACHE_CONTROL, 0) != 0
