"""The plan / timeline panel (seed 004's metaphor).

Each request gets an entry; under it the plan the agent wrote with `todo_write` (pending ○, in
progress with a spinner, done ✓, cancelled ✗), and the tool traces of the step in progress as
small lines inside that step instead of chat spam. Every checkpoint sits on the timeline where it
was taken; select one and press `r` (or click "restore") to roll the workspace back to it; Esc goes back
to the prompt.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from tui.widgets.release import remove_released
from tui.widgets.spinner import SPINNER

TRACES_SHOWN = 5
KEEP_RUNS = 12  # requests kept as widgets; older ones fold into one list (EarlierRuns)
ICONS = {"pending": "○", "in_progress": "◐", "completed": "✓", "cancelled": "✗"}


@dataclass
class Trace:
    call_id: str
    tool: str
    key: str
    ok: bool | None = None


def _traces_text(traces: list[Trace], frame: int, style: Style, failed: Style) -> Text:
    text = Text()
    hidden = len(traces) - TRACES_SHOWN
    if hidden > 0:
        text.append(f"  +{hidden} earlier\n", style=style)
    for trace in traces[-TRACES_SHOWN:]:
        icon = SPINNER[frame % len(SPINNER)] if trace.ok is None else ("✓" if trace.ok else "✗")
        key = trace.key if len(trace.key) <= 40 else "…" + trace.key[-39:]
        text.append(f"  {icon} {trace.tool} {key}\n", style=style if trace.ok is not False else failed)
    text.rstrip()
    return text


class Traced(Static):
    """A timeline entry that can show tool traces in the theme's muted colour."""

    COMPONENT_CLASSES = {"traced--trace", "traced--failed"}
    DEFAULT_CSS = """
    Traced > .traced--trace { color: $text-muted; text-style: none; }
    Traced > .traced--failed { color: $error; text-style: none; }
    """

    def traces_text(self, traces: list[Trace], frame: int) -> Text:
        return _traces_text(traces, frame, self.get_component_rich_style("traced--trace"),
                            self.get_component_rich_style("traced--failed"))


class PlanItem(Traced):
    DEFAULT_CSS = """
    PlanItem {
        padding: 0 0 0 2;
        &.-in_progress { color: $accent; }
        &.-completed, &.-cancelled { color: $text-muted; }
    }
    """

    def __init__(self, item_id: str, content: str, status: str) -> None:
        super().__init__(classes=f"-{status}")
        self.item_id, self.step, self.status = item_id, content, status
        self.traces: list[Trace] = []
        self.live = True  # its request is running: an item in progress spins

    def show(self, frame: int = 0) -> None:
        spinning = self.live and self.status == "in_progress"
        icon = SPINNER[frame % len(SPINNER)] if spinning else ICONS[self.status]
        line = Text(f"{icon} ", style="bold") + Text(self.step, style="bold" if self.status == "in_progress" else "")
        if self.status == "cancelled":
            line.stylize("strike")
        if self.traces and self.status == "in_progress":
            line += Text("\n") + self.traces_text(self.traces, frame)
        self.update(line)

    def on_mount(self) -> None:
        self.show()


class PlanBlock(Vertical):
    """The todo list as it stands in one request (updated in place while it runs)."""

    DEFAULT_CSS = "PlanBlock { height: auto; }"

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[str, PlanItem] = {}
        self.traces: dict[str, list[Trace]] = {}  # item id -> traces, kept across updates

    def update_todos(self, todos: list[Any]) -> None:
        keep = [t.id for t in todos]
        for item_id, item in list(self.items.items()):
            if item_id not in keep:
                item.remove()
                del self.items[item_id]
        for index, todo in enumerate(todos):
            item = self.items.get(todo.id)
            if item is None:
                item = PlanItem(todo.id, todo.content, todo.status)
                item.traces = self.traces.setdefault(todo.id, [])
                self.items[todo.id] = item
                self.mount(item, before=index if index < len(self.children) else None)
            item.step = todo.content
            item.set_class(False, f"-{item.status}")
            item.status = todo.status
            item.add_class(f"-{todo.status}")
            if item.is_mounted:
                item.show()

    def active(self) -> PlanItem | None:
        return next((i for i in self.items.values() if i.status == "in_progress"), None)


class RunEntry(Traced):
    """A request: its prompt, then (while it runs and no plan step is active) its tool traces."""

    DEFAULT_CSS = "RunEntry { margin-top: 1; }"

    def __init__(self, prompt: str) -> None:
        super().__init__()
        first = prompt.strip().splitlines()[0] if prompt.strip() else "(empty prompt)"
        self.title = first if len(first) <= 120 else first[:119] + "…"
        self.traces: list[Trace] = []
        self.finished = False

    def show(self, frame: int = 0) -> None:
        line = Text("▸ ", style="bold") + Text(self.title, style="bold")
        if self.traces and not self.finished:
            line += Text("\n") + self.traces_text(self.traces, frame)
        self.update(line)

    def on_mount(self) -> None:
        self.show()


class RunEnd(Static):
    """How a request ended (done, stopped, failed), after its checkpoints."""

    DEFAULT_CSS = "RunEnd { color: $text-muted; padding: 0 0 0 2; }"

    def __init__(self, outcome: str) -> None:
        super().__init__(Text(outcome))
        self.outcome = outcome


class CheckpointEntry(Widget, can_focus=True):
    """A checkpoint on the timeline; `r` or a click on "restore" asks to roll back to it.

    Not Enter: the restore dialog takes Enter and `y` as yes, so a stray Enter followed by a `y`
    typed for the prompt would roll the workspace back.
    """

    DEFAULT_CSS = """
    CheckpointEntry {
        height: auto;
        padding: 0 0 0 2;
        color: $text-muted;
        &:hover { background: $boost; }
        &:focus { background: $accent 30%; color: $text; }
    }
    """

    BINDINGS = [Binding("r", "restore", "Restore checkpoint", id="timeline.restore")]

    def __init__(self, checkpoint_id: str, label: str, created: float | None = None) -> None:
        super().__init__()
        self.checkpoint_id, self.label = checkpoint_id, label
        self.created = created  # None when unknown (replayed from a session file)

    def render(self) -> Text:
        stamp = time.strftime("%H:%M ", time.localtime(self.created)) if self.created else ""
        return (Text("↺ ", style="bold") + Text(f"{stamp}{self.checkpoint_id[:7]} ", style="dim")
                + Text(self.label) + Text("  restore", style="underline"))

    def action_restore(self) -> None:
        self.post_message(Timeline.RestoreRequested(self.checkpoint_id, self.label))

    def on_click(self) -> None:
        self.focus()
        self.action_restore()


class Timeline(VerticalScroll):
    """Requests, plans, traces and checkpoints, in the order they happened."""

    DEFAULT_CSS = Path(__file__).with_name("timeline.tcss").read_text(encoding="utf-8")
    BINDINGS = [
        Binding("down,j", "move(1)", "Next checkpoint", show=False, id="timeline.next"),
        Binding("up,k", "move(-1)", "Previous checkpoint", show=False, id="timeline.previous"),
    ]

    class RestoreRequested(Message):
        def __init__(self, checkpoint_id: str, label: str) -> None:
            super().__init__()
            self.checkpoint_id, self.label = checkpoint_id, label

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run: RunEntry | None = None
        self.plan: PlanBlock | None = None
        self.steps: Any = None  # the structured workflow's StructuredPlan in this request
        self.traces: dict[str, Trace] = {}
        self.frame = 0
        self.groups: list[list[Widget]] = []  # the widgets of each request still shown as widgets
        self.children_rows: dict[str, Any] = {}  # child session id -> its ChildEntry (a subagent)

    def compose(self) -> Any:
        yield Static("Each request's plan, tool traces and checkpoints appear here.", classes="timeline-empty")

    def _append(self, widget: Widget) -> None:
        for empty in self.query(".timeline-empty"):
            empty.remove()
        if not self.groups:
            self.groups.append([])
        self.groups[-1].append(widget)
        self.mount(widget)
        self.scroll_end(animate=False)

    def _fold(self) -> None:
        """Fold the oldest requests into the EarlierRuns list once there are too many."""
        from tui.widgets.earlier import EarlierRuns

        while len(self.groups) > KEEP_RUNS:
            group = self.groups.pop(0)
            earlier = next(iter(self.query(EarlierRuns)), None)
            if earlier is None:
                earlier = EarlierRuns(id="earlier-runs")
                self.mount(earlier, before=0)
            title = next((w.title for w in group if isinstance(w, RunEntry)), "(earlier)")
            outcome = next((w.outcome for w in group if isinstance(w, RunEnd)), "")
            points = [(w.checkpoint_id, w.label, w.created) for w in group if isinstance(w, CheckpointEntry)]
            earlier.add_run(title, outcome, points)
            remove_released(group)

    # -- events ---------------------------------------------------------------------------
    def start_run(self, prompt: str) -> None:
        self.run, self.plan, self.steps = RunEntry(prompt), None, None
        self.groups.append([])
        self._append(self.run)

    def set_plan(self, todos: list[Any]) -> None:
        if self.plan is None:
            self.plan = PlanBlock()
            self._append(self.plan)
        self.plan.update_todos(todos)

    # -- the structured workflow: a plan container and its steps (tui/widgets/plansteps.py) --
    def show_steps(self, plan: Any) -> None:
        from tui.widgets.plansteps import StructuredPlan

        if self.steps is None:
            self.steps = StructuredPlan()
            self._append(self.steps)
        self.steps.update_plan(plan)

    def step_start(self, step_id: str) -> None:
        if self.steps is not None:
            self.steps.start(step_id)

    def step_complete(self, step_id: str, status: str, summary: str) -> None:
        if self.steps is not None:
            self.steps.finish(step_id, status, summary)

    def _active(self) -> Any:
        step = self.steps.active() if self.steps is not None else None
        return step or (self.plan.active() if self.plan else None)

    def trace(self, call_id: str, tool: str, key: str) -> None:
        trace = Trace(call_id, tool, key)
        self.traces[call_id] = trace
        if self.steps is not None and self.steps.add_trace(trace, self.frame):
            return
        active = self.plan.active() if self.plan else None
        owner: Any = active or self.run
        if owner is not None:
            owner.traces.append(trace)
            owner.show(self.frame)

    def trace_done(self, call_id: str, ok: bool) -> None:
        trace = self.traces.pop(call_id, None)
        if trace is not None:
            trace.ok = ok
            self._refresh_live()

    # -- subagents (tui/widgets/children.py) ---------------------------------------------
    def child_started(self, child_id: str, agent: str, task: str) -> None:
        from tui.widgets.children import ChildEntry

        row = ChildEntry(child_id, agent, task)
        self.children_rows[child_id] = row
        self._append(row)

    def child_update(self, event: Any) -> None:
        if (row := self.children_rows.get(event.child_id)) is not None:
            row.update_from(event)

    def child_finished(self, event: Any) -> None:
        if (row := self.children_rows.pop(event.child_id, None)) is not None:
            row.finish(event)

    def checkpoint(self, checkpoint_id: str, label: str, created: float | None = None) -> None:
        self._append(CheckpointEntry(checkpoint_id, label, created))

    def end_run(self, outcome: str) -> None:
        for trace in self.traces.values():
            trace.ok = False
        self.traces.clear()
        if self.run is not None:
            self.run.finished = True
            self.run.show()
        if self.plan is not None:
            for item in self.plan.items.values():
                item.live = False
                item.show()
        if self.steps is not None:
            self.steps.stop_live()
        self._append(RunEnd(outcome))
        self.run = None
        self._fold()

    def tick(self) -> None:
        self.frame += 1
        self._refresh_live()
        for row in self.children_rows.values():
            row.tick(self.frame)

    def _refresh_live(self) -> None:
        if self.run is not None:
            self.run.show(self.frame)
        if (active := self._active()) is not None:
            active.show(self.frame)

    def clear(self) -> None:
        self.run, self.plan, self.steps = None, None, None
        self.traces.clear()
        self.groups.clear()
        self.remove_children()
        self.mount(Static("Each request's plan, tool traces and checkpoints appear here.", classes="timeline-empty"))

    # -- keyboard -------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        from tui.widgets.earlier import EarlierRuns

        entries: list[Widget] = [*self.query(EarlierRuns), *self.query(CheckpointEntry)]
        if not entries:
            return
        focused = self.app.focused
        index = entries.index(focused) if focused in entries else (len(entries) if step < 0 else -1)
        target = entries[max(0, min(len(entries) - 1, index + step))]
        target.focus()
        self.scroll_to_widget(target)
