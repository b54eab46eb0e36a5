"""The shapes the loop consumes from any model path: a reply, its tool calls, a retryable failure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent.llm.reasoning import ThinkingCollector

TextHook = Callable[[str], None]
RetryHook = Callable[[str, int, float], None]  # (why, attempt, delay)


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
    reasoning_tokens: int = 0  # of completion_tokens (agent/llm/reasoning.py)
    thinking: ThinkingCollector = field(default_factory=ThinkingCollector)


class Retryable(Exception):
    """A failure worth another attempt (rate limit, connection, timeout, 5xx); `retry_after`: the
    provider's asked-for wait in seconds, when it named one."""

    def __init__(self, why: str, retry_after: float | None = None, kind: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.retry_after = retry_after
        self.kind = kind
