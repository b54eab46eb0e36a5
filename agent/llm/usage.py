"""Prompt caching and what a reply cost.

Anthropic caches a prompt prefix only up to `cache_control` breakpoints that the request marks,
and allows four. Without them a long session pays the full input price for the whole
conversation on every step. `with_cache_markers` marks copies (the conversation itself stays
as it is): the last tool (the tools come first in Anthropic's prefix), the system prompt, the
message that ended the previous request (so the prefix cached then is read now, however many
tool results were added since) and the last message (written now, read by the next step).

Cost is computed here from the model's prices in litellm's model table (agent/llm/facts.py),
with cache reads and writes at their own prices, on every path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EPHEMERAL = {"type": "ephemeral"}
CACHING_PROVIDERS = frozenset({"anthropic"})
LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat", "lm_studio", "llamafile"})  # free to run: cost 0


def provider(model: str) -> str:
    from agent.llm.routing import provider_prefix

    return provider_prefix(model)


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


def prices_for(model: str) -> Prices | None:
    """The model's prices from litellm's model table (None: unknown, so no cost is shown)."""
    from agent.llm.facts import facts

    entry = facts(model).entry
    if not entry or entry.get("input_cost_per_token") is None:
        return FREE if provider(model) in LOCAL_PROVIDERS else None
    base = float(entry["input_cost_per_token"])
    read, write = entry.get("cache_read_input_token_cost"), entry.get("cache_creation_input_token_cost")
    return Prices(base, float(entry.get("output_cost_per_token") or 0.0),
                  float(read) if read is not None else base, float(write) if write is not None else base)
