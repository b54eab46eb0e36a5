"""A subagent on the timeline: one folded row (its agent, current tool and spend, live), which
Enter or a click expands to its task, the tools it used and its report."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget

from tui.widgets.spinner import SPINNER

TOOLS_KEPT = 8


class ChildEntry(Widget, can_focus=True):
    DEFAULT_CSS = """
    ChildEntry { height: auto; padding: 0 0 0 2; }
    ChildEntry:focus { background: $boost; }
    ChildEntry.-failed { color: $error; }
    ChildEntry.-waiting { color: $warning; }
    """
    BINDINGS = [Binding("enter,space", "fold", "Expand or fold the subagent", show=False, id="timeline.child")]

    def __init__(self, child_id: str, agent: str, task: str) -> None:
        super().__init__()
        self.child_id, self.agent, self.child_task = child_id, agent, task
        self.expanded = False
        self.status = "working"  # working, waiting, done, failed
        self.tool: str | None = None
        self.detail = ""
        self.tokens = 0
        self.cost: float | None = None
        self.tools: list[str] = []
        self.report = ""
        self.frame = 0

    def update_from(self, event: Any) -> None:
        """A `subagent_update`: its current tool, whether it waits, its spend."""
        self.status, self.tokens, self.cost = event.status, event.tokens, event.cost
        if event.tool and (event.tool, event.detail) != (self.tool, self.detail) and event.status == "working":
            self.tools = [*self.tools, f"{event.tool} {event.detail}".strip()][-TOOLS_KEPT:]
        self.tool, self.detail = event.tool, event.detail
        self._restyle()
        self.refresh(layout=True)

    def finish(self, event: Any) -> None:
        self.status = "done" if event.ok else "failed"
        self.tokens, self.cost, self.report = event.tokens, event.cost, event.report
        self.detail = "" if event.ok else event.reason
        self._restyle()
        self.refresh(layout=True)

    def tick(self, frame: int) -> None:
        if self.status in ("working", "waiting"):
            self.frame = frame
            self.refresh()

    def _restyle(self) -> None:
        self.set_class(self.status == "failed", "-failed")
        self.set_class(self.status == "waiting", "-waiting")

    def summary(self) -> str:
        icon = {"done": "✓", "failed": "✗", "waiting": "⏸"}.get(self.status, SPINNER[self.frame % len(SPINNER)])
        doing = {"waiting": f"waiting for you · {self.detail}", "done": "done", "failed": f"failed · {self.detail}"}.get(
            self.status, f"{self.tool} {self.detail}".strip() if self.tool else "thinking")
        cost = f" · ${self.cost:.4f}" if self.cost is not None else ""
        task = self.child_task if len(self.child_task) <= 28 else self.child_task[:27] + "…"
        return f"{'▾' if self.expanded else '▸'} {icon} {self.agent} · {task}: {doing[:60]} · {self.tokens:,} tok{cost}"

    def render(self) -> Text:
        text = Text(self.summary())
        if self.expanded:
            text.append(f"\n   task: {self.child_task}", style="dim")
            for tool in self.tools:
                text.append(f"\n   · {tool}", style="dim")
            if self.report:
                text.append(f"\n   report: {self.report[:600]}")
        return text

    def action_fold(self) -> None:
        self.expanded = not self.expanded
        self.refresh(layout=True)

    def on_click(self) -> None:
        self.action_fold()
