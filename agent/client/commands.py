"""What a front end asks of a session: one typed union of commands, and the handle's reply.

Plain dataclasses (no pydantic): a front end builds them from its protocol's request (a WebSocket
frame, an ACP request, a key in the app) and gives them to `SessionHandle.submit`. Each handle
either does what a command says or refuses it with a `Reply` that says why (`kind` tells a front
end which status to answer with): a command is never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["plan", "ask", "allow"]
DecisionKind = Literal["allow_once", "allow_all", "deny", "stop"]
Reasoning = Literal["off", "low", "medium", "high"]
RefusalKind = Literal["invalid", "not_found", "conflict", "unavailable"]
MODES: tuple[str, ...] = ("plan", "ask", "allow")
REASONING: tuple[str, ...] = ("off", "low", "medium", "high")


@dataclass(frozen=True)
class Prompt:
    """A turn. Queued behind the running one; its reply comes when it ends (or is dropped by a stop)."""

    text: str
    images: tuple[str, ...] = ()  # paths of images read by the front end's process
    mentions: tuple[str, ...] = ()  # workspace paths the user mentioned (@path)


@dataclass(frozen=True)
class Answer:
    """The answer to an approval (None: the oldest waiting); the first answer wins."""

    approval_id: str | None
    decision: DecisionKind
    feedback: str | None = None
    rejected_hunks: dict[str, list[int]] = field(default_factory=dict)  # path -> hunks not applied
    edited: dict[str, str] = field(default_factory=dict)  # path -> the content the user wrote instead


@dataclass(frozen=True)
class Stop:
    """Stop the running turn and drop the prompts queued behind it (each is answered: stopped)."""


@dataclass(frozen=True)
class SetMode:
    mode: Mode


@dataclass(frozen=True)
class SetModel:
    model: str


@dataclass(frozen=True)
class SetReasoning:
    level: Reasoning


@dataclass(frozen=True)
class SetProfile:
    """The agent (seed 003's `agent_id`): a profile, from the next turn on."""

    name: str


@dataclass(frozen=True)
class Undo:
    ref: str | None = None


@dataclass(frozen=True)
class PlanDecision:
    """The answer to the plan review (or failed step) the running turn waits for."""

    decision: str  # approve, edit, feedback, reject, retry, skip, abort (agent/planning/review.py)
    steps: list[dict[str, Any]] | None = None
    feedback: str | None = None


@dataclass(frozen=True)
class Detach:
    """Leave the session; a run in the session host goes on for the other front ends."""


Command = Prompt | Answer | Stop | SetMode | SetModel | SetReasoning | SetProfile | Undo | PlanDecision | Detach


@dataclass(frozen=True)
class Reply:
    """A command's outcome: `ok`, or `error` saying why not (`kind`: which refusal it is)."""

    ok: bool = True
    error: str | None = None
    kind: RefusalKind | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def refused(cls, error: str, kind: RefusalKind = "invalid") -> Reply:
        return cls(ok=False, error=error, kind=kind)

    @property
    def stopped(self) -> bool:
        """A prompt's reply: its turn was stopped, or dropped by a stop before it ran."""
        return self.data.get("completion_reason") == "stopped"


@dataclass(frozen=True)
class Note:
    """A line about the session that is not one of its events: who joined, whose turn starts or
    ends, whose prompts a stop dropped, who answered an approval (agent/host/wire.py HOST_TYPES)."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)


def refusal_kind(error: str) -> RefusalKind:
    """Which refusal a session's error message is (the host's refusals come as text)."""
    if "answered already" in error or "in use" in error or "another process" in error:
        return "conflict"
    if error.startswith(("no pending approval", "no approval is waiting", "no session")) or "is not live" in error:
        return "not_found"
    return "invalid"


def check_mode(mode: str) -> Reply | None:
    """None when `mode` is one; else the refusal naming the modes."""
    return None if mode in MODES else Reply.refused(f"unknown mode {mode[:30]!r} (plan, ask or allow)")
