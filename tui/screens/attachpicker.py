"""Pick a session to attach to (`coder-tui attach`, `/attach`): the host's live sessions (running
or not, who is attached) first, then this folder's recorded ones (the host resumes the chosen one),
and a new session. Enter attaches, Esc cancels."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.textsafe import line

NEW = "new"


class AttachPicker(ModalScreen[str | None]):
    DEFAULT_CSS = """
    AttachPicker { align: center middle; }
    AttachPicker > Vertical {
        width: 110; max-width: 95%; height: 80%; padding: 1 2;
        border: round $primary; background: $panel;
    }
    AttachPicker OptionList { height: 1fr; margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="attach.cancel")]

    def __init__(self, live: list[dict[str, Any]], workspace: str, host: bool = True) -> None:
        super().__init__()
        self.live = live
        self.workspace = workspace  # its recorded sessions are listed
        self.host = host  # False: no host runs; the choice opens in-process

    def compose(self) -> ComposeResult:
        where = "in the session host" if self.host else "in-process (no session host)"
        with Vertical():
            yield Static(f"Attach to a session {where}: Enter opens one, Esc cancels", markup=False)
            yield OptionList()

    def on_mount(self) -> None:
        from agent.session.record import SessionStore

        options = self.query_one(OptionList)
        live_ids = {str(row["session_id"]) for row in self.live}
        for row in self.live:
            options.add_option(Option(live_label(row), id=str(row["session_id"])))
        recorded = [s for s in SessionStore().list() if s.workspace == self.workspace and s.id not in live_ids]
        for summary in recorded[:100]:
            prompt = " ".join(summary.first_prompt.split()) or "(no prompt yet)"
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.created))
            label = Text("recorded  ", style="dim") + Text(f"{when}  ", style="dim") + Text(line(prompt[:70])) \
                + Text(f"  {summary.id}", style="dim")
            options.add_option(Option(label, id=summary.id))
        options.add_option(Option(Text(f"new session in {self.workspace}", style="italic"), id=NEW))
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def live_label(row: dict[str, Any]) -> Text:
    """`live  running · attached: run --attach (pid 12)  ~/proj  ID`."""
    state = "running" if row.get("running") else "idle"
    if row.get("queued"):
        state += f", {row['queued']} queued"
    if row.get("pending_approvals"):
        state += ", approval waiting"
    clients = ", ".join(str(c) for c in row.get("clients", [])) or "nobody"
    title = str(row.get("prompt") or "") or "(no prompt yet)"
    return (Text("live      ", style="bold") + Text(line(title[:70]) + "  ") + Text(f"{state} · attached: {line(clients)}  ")
            + Text(line(str(row.get("workspace", ""))), style="dim") + Text(f"  {row['session_id']}", style="dim"))
