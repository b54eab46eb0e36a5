"""The model's reasoning in the conversation: a dimmed block above its answer, folded to one line
once the answer (or a tool call) starts; Enter or a click unfolds it again."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static

SHOWN_CHARS = 20_000  # of a very long reasoning, the end is what is shown while it streams


def summary(text: str, done: bool) -> str:
    lines = len(text.strip().splitlines()) or 1
    return f"▸ thought ({lines} line{'s' if lines != 1 else ''})" if done else "▾ thinking…"


class ReasoningBlock(Widget, can_focus=True):
    DEFAULT_CSS = """
    ReasoningBlock {
        height: auto;
        padding: 0 0 0 1;
        margin-top: 1;
        color: $text-muted;
        &:focus { background: $boost; }
        & .reasoning-body { height: auto; max-height: 20; overflow-y: auto; padding: 0 0 0 2;
                            color: $text-muted; text-style: italic; }
        &.-folded .reasoning-body { display: none; }
    }
    """

    BINDINGS = [Binding("enter,space", "show_hide", "Show reasoning", id="transcript.toggle_reasoning")]

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.done = False

    def compose(self) -> ComposeResult:
        yield Static(summary("", False), classes="reasoning-line", markup=False)
        yield Static("", classes="reasoning-body", markup=False)

    def feed(self, delta: str) -> None:
        self.text += delta
        self._show()

    def fold(self) -> None:
        """The answer started: the reasoning shrinks to its one line (until unfolded)."""
        if not self.done:
            self.done = True
            self.add_class("-folded")
            self._show()

    def action_show_hide(self) -> None:
        self.toggle_class("-folded")

    def on_click(self) -> None:
        self.action_show_hide()

    def _show(self) -> None:
        for line in self.query(".reasoning-line").results(Static):
            line.update(Text(summary(self.text, self.done)))
        for body in self.query(".reasoning-body").results(Static):
            body.update(Text(self.text[-SHOWN_CHARS:]))
