"""Pick one of a few choices (Enter picks, Esc cancels): /rewind's prompts and what to restore."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class PickScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PickScreen { align: center middle; }
    PickScreen > Vertical {
        width: 100; max-width: 95%; height: auto; max-height: 80%; padding: 1 2;
        border: round $primary; background: $panel;
    }
    PickScreen OptionList { height: auto; max-height: 24; margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pick.cancel")]

    def __init__(self, title: str, choices: list[tuple[str, Text | str]]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"{self.title_text} (Enter picks, Esc cancels)", markup=False)
            yield OptionList(*(Option(label, id=key) for key, label in self.choices))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
