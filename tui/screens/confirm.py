"""A yes/no question in a small modal (restore a checkpoint, quit while the agent works)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 64; max-width: 90%; height: auto; padding: 1 2;
        border: round $primary; background: $panel;
    }
    ConfirmScreen .question { width: 1fr; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
        Binding("enter", "default", "Default", show=False, id="confirm.default"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "Cancel", default: bool = True) -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no
        self.default = default  # what Enter answers (False where yes loses the user's work)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, classes="question", markup=False)
            with Horizontal():
                yield Button(f"{self.no} (n)", id="no")
                yield Button(f"{self.yes} (y)", id="yes", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#yes" if self.default else "#no", Button).focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def action_default(self) -> None:
        focused = self.focused
        self.dismiss(focused.id == "yes" if isinstance(focused, Button) else self.default)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
