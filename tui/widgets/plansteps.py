"""The structured workflow's plan on the timeline (seed 004): a plan container with the goal
(click it to fold the steps away), and one entry per step: pending ○, in progress with a spinner
and the step's tool traces inside it, done ✓, failed ✗, skipped ⊘. Click a step to expand it to
its description and, once it ran, its summary."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from tui.widgets.spinner import SPINNER
from tui.widgets.timeline import Trace, Traced

STEP_ICONS = {"pending": "○", "in_progress": "◐", "done": "✓", "failed": "✗", "skipped": "⊘"}
SUMMARY_SHOWN = 600


class StepItem(Traced):
    DEFAULT_CSS = """
    StepItem {
        padding: 0 0 0 2;
        &.-pending { color: $text-muted; }
        &.-in_progress { color: $accent; border-left: outer $accent; padding-left: 1; }
        &.-done, &.-skipped { color: $text-muted; }
        &.-failed { color: $error; }
        &:hover { background: $boost; }
    }
    """

    def __init__(self, step_id: str, number: int, title: str, description: str, status: str) -> None:
        super().__init__(classes=f"-{status}")
        self.step_id, self.number, self.title_text, self.description = step_id, number, title, description
        self.status, self.summary = status, ""
        self.traces: list[Trace] = []
        self.expanded = False
        self.live = True  # its run is going on: a step in progress spins

    def set_status(self, status: str) -> None:
        self.set_class(False, f"-{self.status}")
        self.status = status
        self.add_class(f"-{status}")

    def show(self, frame: int = 0) -> None:
        spinning = self.live and self.status == "in_progress"
        icon = SPINNER[frame % len(SPINNER)] if spinning else STEP_ICONS[self.status]
        line = Text(f"{icon} {self.number}. ", style="bold") + Text(
            self.title_text, style="bold" if self.status == "in_progress" else "")
        if self.expanded:
            if self.description:
                line += Text(f"\n    {self.description}", style="italic")
            if self.summary:
                summary = self.summary if len(self.summary) <= SUMMARY_SHOWN else self.summary[:SUMMARY_SHOWN] + "…"
                line += Text(f"\n    → {summary}")
        if self.traces and self.status == "in_progress":
            line += Text("\n") + self.traces_text(self.traces, frame)
        self.update(line)

    def on_mount(self) -> None:
        self.show()

    def on_click(self) -> None:
        self.expanded = not self.expanded
        self.show()


class PlanHeader(Static):
    DEFAULT_CSS = "PlanHeader { color: $text; text-style: bold; } PlanHeader:hover { background: $boost; }"

    def on_click(self) -> None:
        parent = self.parent
        if isinstance(parent, StructuredPlan):
            parent.toggle()


class StructuredPlan(Vertical):
    """The plan container: the goal, then the steps (folded away with a click on the goal).

    Events may come before the container is mounted (the header mounts with it, and the steps
    go after the header), so the plan is kept as data and the step widgets follow it."""

    DEFAULT_CSS = """
    StructuredPlan { height: auto; margin: 1 0 0 1; border-left: outer $primary; padding-left: 1; }
    StructuredPlan.-folded StepItem { display: none; }
    """

    def __init__(self) -> None:
        self.header = PlanHeader()
        super().__init__(self.header)
        self.goal = ""
        self.order: list[tuple[str, str, str]] = []  # (id, title, description)
        self.status: dict[str, str] = {}
        self.summary: dict[str, str] = {}
        self.steps: dict[str, StepItem] = {}
        self.traces: dict[str, list[Trace]] = {}  # step id -> traces, kept when the plan is replanned
        self.folded = False
        self.ready = False  # mounted (`is_mounted` is not yet true inside on_mount)

    def on_mount(self) -> None:
        self.ready = True
        self._rebuild()

    def update_plan(self, plan: Any) -> None:
        self.goal = plan.refined_goal
        self.order = [(s.id, s.title, s.description) for s in plan.steps]
        self.status = {s.id: s.status for s in plan.steps}
        self._rebuild()

    def start(self, step_id: str) -> None:
        self.traces[step_id] = []
        self._set(step_id, "in_progress", "")

    def finish(self, step_id: str, status: str, summary: str) -> None:
        self._set(step_id, status, summary)

    def _set(self, step_id: str, status: str, summary: str) -> None:
        self.status[step_id], self.summary[step_id] = status, summary
        if (item := self.steps.get(step_id)) is not None:
            item.set_status(status)
            item.summary = summary
            item.traces = self.traces.setdefault(step_id, [])
            item.show()
        self._show_header()

    def _rebuild(self) -> None:
        if not self.ready:
            return
        for item in self.steps.values():
            item.remove()
        self.steps = {}
        for number, (step_id, title, description) in enumerate(self.order, 1):
            item = StepItem(step_id, number, title, description, self.status.get(step_id, "pending"))
            item.summary = self.summary.get(step_id, "")
            item.traces = self.traces.setdefault(step_id, [])
            self.steps[step_id] = item
            self.mount(item)
        self._show_header()

    def add_trace(self, trace: Trace, frame: int) -> bool:
        """Into the step in progress (False when no step is): its traces show inside it."""
        step_id = next((i for i, status in self.status.items() if status == "in_progress"), None)
        if step_id is None:
            return False
        self.traces.setdefault(step_id, []).append(trace)
        if (item := self.steps.get(step_id)) is not None:
            item.show(frame)
        return True

    def active(self) -> StepItem | None:
        return next((i for i in self.steps.values() if i.status == "in_progress"), None)

    def stop_live(self) -> None:
        for item in self.steps.values():
            item.live = False
            item.show()

    def toggle(self) -> None:
        self.folded = not self.folded
        self.set_class(self.folded, "-folded")
        self._show_header()

    def _show_header(self) -> None:
        done = sum(status in ("done", "skipped") for status in self.status.values())
        arrow = "▸" if self.folded else "▾"
        self.header.update(Text(f"{arrow} Plan · {done}/{len(self.order)} · ", style="bold") + Text(self.goal))
