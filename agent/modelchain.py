"""Fallback models and budgets: what keeps a run going when a model fails, and what stops it.

`ModelChain` stands where the loop expects an `LLM`: when the current model still fails after its
retries, or rejects the request as too long for its context window, the next of the configured
`fallback_models` takes over (for the rest of the session), and a `model_fallback` event says so.
`Budget` is the seed's resource limits: a run stops cleanly, completion reason `budget`, once it has
spent its tokens or its cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from agent.events import ModelFallback
from agent.llm import LLM, LLMError, ModelReply, RetryHook, TextHook

SWITCH_ON = ("gave_up", "refused", "context_window")  # agent/llm/errors.py kinds


class ModelChain:
    def __init__(self, first: LLM, fallbacks: list[str], emit: Callable[[Any], None]) -> None:
        self.llms = [first, *(replace(first, model=name) for name in fallbacks if name != first.model)]
        self.index = 0
        self.emit = emit

    @property
    def current(self) -> LLM:
        return self.llms[self.index]

    @property
    def model(self) -> str:
        return self.current.model

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                       on_text: TextHook, on_retry: RetryHook, on_reasoning: TextHook | None = None) -> ModelReply:
        while True:
            try:
                return await self.current.complete(messages, tools, on_text, on_retry, on_reasoning)
            except LLMError as exc:
                if exc.kind not in SWITCH_ON or self.index + 1 >= len(self.llms):
                    raise
                failed = self.current.model
                self.index += 1
                self.emit(ModelFallback(from_model=failed, to_model=self.current.model, reason=str(exc)))

    async def check(self) -> str:
        return await self.current.check()


class BudgetExceeded(Exception):
    """The run spent its budget; the message says what was spent."""


@dataclass
class Budget:
    """A turn's limits. Subagents spend from their parent's: each child's totals join the parent
    budget's `shared` (counted whole: a child starts at zero), and a child's own budget names the
    parent's in `parent`, so that a child's request is refused once the family has spent the cap."""

    max_tokens: int | None = None
    max_cost: float | None = None
    start_tokens: int = 0
    start_cost: float = 0.0
    shared: list[Any] = field(default_factory=list)  # children's Totals spending from this budget
    parent: tuple[Budget, Any] | None = None  # (the parent's budget, the parent's Totals)

    @classmethod
    def starting_at(cls, totals: Any, max_tokens: int | None, max_cost: float | None) -> Budget | None:
        if max_tokens is None and max_cost is None:
            return None
        return cls(max_tokens, max_cost, totals.prompt_tokens + totals.completion_tokens, totals.cost or 0.0)

    def check(self, totals: Any) -> None:
        """Raise BudgetExceeded when the run (with its children) has spent its tokens or its money,
        or its parent's budget is spent."""
        if self.parent is not None:
            self.parent[0].check(self.parent[1])
        tokens = totals.prompt_tokens + totals.completion_tokens - self.start_tokens
        cost = (totals.cost or 0.0) - self.start_cost
        for child in self.shared:
            tokens += child.prompt_tokens + child.completion_tokens
            cost += child.cost or 0.0
        if self.max_tokens is not None and tokens >= self.max_tokens:
            raise BudgetExceeded(f"Stopped: the token budget is spent ({tokens:,} tokens used of "
                                 f"{self.max_tokens:,}{_cost_note(totals, cost)}).")
        if self.max_cost is not None and cost >= self.max_cost:
            raise BudgetExceeded(f"Stopped: the cost budget is spent (${cost:.4f} of ${self.max_cost:.4f}, "
                                 f"{tokens:,} tokens).")


def _cost_note(totals: Any, cost: float) -> str:
    return f", ${cost:.4f}" if totals.cost is not None else ""
