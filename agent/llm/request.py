"""One model request as every client receives it: the model's settings, its route, the
conversation and tools as they go out, the key, and where it goes (for the error messages)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.llm.errors import Place
from agent.llm.routing import Route


@dataclass(frozen=True)
class Request:
    model: str  # the model string as configured (openai/gpt-4.1); the route has the name sent
    api_base: str | None  # the address the user gave (None: the route's default)
    key_variable: str | None
    timeout: float
    reasoning: str  # agent/llm/reasoning.py LEVELS
    max_tokens: int | None
    route: Route
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    key: str | None

    @property
    def place(self) -> Place:
        return Place(self.model, self.api_base or self.route.base, self.key_variable or self.route.key_variable)
