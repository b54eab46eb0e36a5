"""A plan in the room's chat: when the agent answers @agent with a plan (the structured workflow,
agent/planning), the plan is posted to the chat, then one line per step as it finishes. OCT chat
messages cannot be edited once sent, so progress comes as short follow-up lines."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ICONS = {"pending": "○", "in_progress": "◐", "done": "✓", "failed": "✗", "skipped": "⊘"}
SUMMARY_CHARS = 200


def plan_message(plan: Any) -> str:
    lines = [f"Plan: {plan.refined_goal}"]
    lines += [f"{ICONS[s.status]} {n}. {s.title}" for n, s in enumerate(plan.steps, 1)]
    return "\n".join(lines)


class PlanChat:
    def __init__(self, send: Callable[[str], None]) -> None:
        self.send = send
        self.numbers: dict[str, tuple[int, str]] = {}  # step id -> (number, title)

    def observe(self, event: Any) -> None:
        if event.type == "plan_created":
            self.numbers = {s.id: (n, s.title) for n, s in enumerate(event.plan.steps, 1)}
            self.send(plan_message(event.plan))
        elif event.type == "step_complete" and event.step_id in self.numbers:
            number, title = self.numbers[event.step_id]
            summary = " ".join(event.summary.split())
            summary = summary if len(summary) <= SUMMARY_CHARS else summary[: SUMMARY_CHARS - 1] + "…"
            line = f"{ICONS[event.status]} {number}/{len(self.numbers)} {title}: {event.status}"
            self.send(line + (f" — {summary}" if summary else ""))

    @contextmanager
    def attached(self, session: Any) -> Iterator[None]:
        """Sees the session's events while a run lasts (the session's own sink still gets them)."""
        sink = session.sink

        def both(event: Any) -> None:
            sink(event)
            self.observe(event)

        session.sink = both
        try:
            yield
        finally:
            session.sink = sink
