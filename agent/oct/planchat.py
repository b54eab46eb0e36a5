"""A plan in the room's chat: when the agent answers @agent with a plan (the structured workflow,
agent/planning), the plan is posted to the chat, then one line per step as it finishes. OCT chat
messages cannot be edited once sent, so progress comes as short follow-up lines."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agent import events as ev
from agent.consumer import EventHandler

ICONS = {"pending": "○", "in_progress": "◐", "done": "✓", "failed": "✗", "skipped": "⊘"}
SUMMARY_CHARS = 200


def plan_message(plan: Any) -> str:
    lines = [f"Plan: {plan.refined_goal}"]
    lines += [f"{ICONS[s.status]} {n}. {s.title}" for n, s in enumerate(plan.steps, 1)]
    return "\n".join(lines)


class PlanChat(EventHandler):
    def __init__(self, send: Callable[[str], None]) -> None:
        self.send = send
        self.numbers: dict[str, tuple[int, str]] = {}  # step id -> (number, title)

    def on_plan_created(self, event: ev.PlanCreated) -> None:
        self.numbers = {s.id: (n, s.title) for n, s in enumerate(event.plan.steps, 1)}
        self.send(plan_message(event.plan))

    def on_step_complete(self, event: ev.StepComplete) -> None:
        if event.step_id not in self.numbers:
            return
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
            self.handle(event)

        session.sink = both
        try:
            yield
        finally:
            session.sink = sink
