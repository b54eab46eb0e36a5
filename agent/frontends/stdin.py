"""Headless stdin lines for the structured workflow: plan decisions and messages to a running plan.

    {"type": "plan_decision", "decision": "approve"}          (see agent/planning/review.py)
    {"type": "message", "text": "also update the README"}     (routed between the plan's steps)

In readable mode, while a plan decision waits, y approves, f TEXT sends feedback, r / k / s
retry, skip or stop. Other lines are approvals' (agent/frontends/headless.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.events import ErrorEvent
from agent.planning.review import parse_line


class MessageLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["message"]
    text: str = Field(min_length=1)


class PlanLines:
    def __init__(self, session: Any, shorthand: bool, emit: Any) -> None:
        self.session = session
        self.shorthand = shorthand
        self.emit = emit

    @property
    def unanswered(self) -> int:
        return int(getattr(self.session.plan_reviewer, "unanswered", 0))

    def handle(self, text: str) -> bool:
        """True when the line was for the plan (handled, or refused with an error event)."""
        if text.startswith("{") and '"message"' in text:
            try:
                line = MessageLine.model_validate_json(text)
            except ValidationError:
                line = None
            if line is not None:
                if not self.session.send(line.text):
                    self.emit(ErrorEvent(message="ignored message: no plan is running", recoverable=True))
                return True
        reviewer = self.session.plan_reviewer
        waiting = getattr(reviewer, "waiting", None) is not None
        if not waiting and '"plan_decision"' not in text:
            return False
        try:
            decision = parse_line(text, self.shorthand and waiting)
            if decision is None:
                return False
            reviewer.resolve(decision)
        except ValueError as exc:
            self.emit(ErrorEvent(message=f"ignored stdin line: {exc}", recoverable=True))
        return True

    def close(self, reason: str) -> None:
        closer = getattr(self.session.plan_reviewer, "close", None)
        if closer is not None:
            closer(reason)
