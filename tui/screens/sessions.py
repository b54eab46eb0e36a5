"""Pick a recorded session of this workspace to continue (/sessions, the palette)."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.textsafe import line

class SessionsScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    SessionsScreen > Vertical {
        width: 100; max-width: 95%; height: 80%; padding: 1 2;
        border: round $primary; background: $panel;
    }
    SessionsScreen OptionList { height: 1fr; margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="sessions.cancel")]

    def __init__(self, workspace: str, current: str | None = None) -> None:
        super().__init__()
        self.workspace = workspace
        self.current = current  # highlighted when listed; else the newest is

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Sessions recorded for {self.workspace} (Enter continues one, Esc cancels)", markup=False)
            yield OptionList()

    def on_mount(self) -> None:
        from agent.session.record import SessionStore

        options = self.query_one(OptionList)
        mine = [s for s in SessionStore().list() if s.workspace == self.workspace]
        for summary in mine[:200]:
            prompt = " ".join(summary.first_prompt.split()) or "(no prompt yet)"
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.created))
            label = Text(f"{when}  ", style="dim") + Text(line(prompt[:80])) + Text(f"  {summary.id}", style="dim")
            options.add_option(Option(label, id=summary.id))
        if not mine:
            options.add_option(Option("No recorded sessions for this workspace yet.", disabled=True))
        else:  # Enter continues one at once: the current session, or the newest
            ids = [summary.id for summary in mine[:200]]
            options.highlighted = ids.index(self.current) if self.current in ids else 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
