"""Plan review: the user's decisions on a new plan and on a step that failed twice.

A front end answers with `PlanDecision`s. Headless ask mode reads them as JSON lines on stdin:

    {"type": "plan_decision", "decision": "approve"}
    {"type": "plan_decision", "decision": "edit", "steps": [{"title": "...", "description": "..."}]}
    {"type": "plan_decision", "decision": "feedback", "feedback": "also update the README"}
    {"type": "plan_decision", "decision": "retry" | "skip" | "stop"}   (after a failed step)

`edit` replaces the steps (reworded, deleted, reordered or added); `feedback` asks the planner
for a new plan; `stop` ends the run (the plan stays in the session for `--resume`).
"""

from __future__ import annotations

import asyncio
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, model_validator

from agent.planning.models import Plan, StepDraft

ReviewKind = Literal["review", "failed_step"]
DecisionName = Literal["approve", "edit", "feedback", "retry", "skip", "stop"]
ALLOWED: dict[str, set[str]] = {"review": {"approve", "edit", "feedback", "stop"},
                                "failed_step": {"retry", "skip", "stop"}}
SHORTHAND: dict[str, DecisionName] = {"y": "approve", "r": "retry", "k": "skip", "s": "stop"}


class PlanDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["plan_decision"] = "plan_decision"
    decision: DecisionName
    steps: list[StepDraft] | None = None
    feedback: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> PlanDecision:
        if self.decision == "edit" and not self.steps:
            raise ValueError("an `edit` decision needs the edited `steps` (at least one)")
        if self.decision == "feedback" and not (self.feedback or "").strip():
            raise ValueError("a `feedback` decision needs the `feedback` text")
        return self


class PlanReviewer(Protocol):
    async def decide(self, kind: ReviewKind) -> PlanDecision: ...


class ScriptedReviewer:
    """Answers from a list in order (tests, automation); stops when the list runs out."""

    def __init__(self, decisions: list[PlanDecision]) -> None:
        self.decisions = list(decisions)
        self.asked: list[ReviewKind] = []

    async def decide(self, kind: ReviewKind) -> PlanDecision:
        self.asked.append(kind)
        return self.decisions.pop(0) if self.decisions else PlanDecision(decision="stop")


class QueueReviewer:
    """Front ends resolve the waiting decision; one given before it is asked is kept for it."""

    def __init__(self) -> None:
        self.waiting: ReviewKind | None = None
        self._future: asyncio.Future[PlanDecision] | None = None
        self.early: list[PlanDecision] = []
        self.closed_reason: str | None = None
        self.unanswered = 0  # decisions taken as `stop` because nobody could answer any more

    async def decide(self, kind: ReviewKind) -> PlanDecision:
        if self.early:
            return self.early.pop(0)
        if self.closed_reason is not None:
            self.unanswered += 1
            return PlanDecision(decision="stop", feedback=self.closed_reason)
        self.waiting, self._future = kind, asyncio.get_running_loop().create_future()
        try:
            return await self._future
        finally:
            self.waiting, self._future = None, None

    def resolve(self, decision: PlanDecision) -> None:
        """Answer the waiting question (ValueError when the decision does not fit it)."""
        kind = self.waiting
        if kind is not None and decision.decision not in ALLOWED[kind]:
            allowed = ", ".join(sorted(ALLOWED[kind]))
            raise ValueError(f"{decision.decision!r} does not answer a {kind.replace('_', ' ')} ({allowed})")
        if self._future is not None and not self._future.done():
            self._future.set_result(decision)
        else:
            self.early.append(decision)

    def close(self, reason: str) -> None:
        self.closed_reason = reason
        if self._future is not None and not self._future.done():
            self.unanswered += 1
            self._future.set_result(PlanDecision(decision="stop", feedback=reason))


def parse_line(text: str, shorthand: bool) -> PlanDecision | None:
    """A plan decision from a stdin line, None when the line is not one (ValueError when invalid)."""
    word, _, rest = text.partition(" ")
    if shorthand and word.lower() in SHORTHAND:
        return PlanDecision(decision=SHORTHAND[word.lower()])
    if shorthand and word.lower() == "f" and rest.strip():
        return PlanDecision(decision="feedback", feedback=rest.strip())
    if '"plan_decision"' not in text:
        return None
    try:
        return PlanDecision.model_validate_json(text)
    except ValueError as exc:
        errors = getattr(exc, "errors", lambda: [{"loc": (), "msg": str(exc)}])()
        where = ".".join(str(p) for p in errors[0]["loc"]) or "line"
        raise ValueError(f"invalid plan decision ({where}: {errors[0]['msg']})") from None
