"""Earlier requests on the timeline, folded into one list (their checkpoints stay restorable).

The timeline keeps the latest requests as widgets; older ones become lines of this list, so the
panel costs the same after 500 requests as after 10. `r` or a click on a checkpoint line asks to
restore it, as on a live checkpoint entry; Enter does not (the restore dialog takes Enter as yes).
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class EarlierRuns(OptionList):
    DEFAULT_CSS = """
    EarlierRuns {
        height: auto;
        max-height: 12;
        border: none;
        padding: 0;
        background: transparent;
        color: $text-muted;
        &:focus { background: $boost; }
    }
    """
    BINDINGS = [
        Binding("r", "restore", "Restore checkpoint", id="timeline.restore_earlier"),
        Binding("enter", "app.bell", show=False),  # replaces OptionList's Enter, which would restore
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.labels: dict[str, str] = {}  # checkpoint id -> label

    def add_run(self, title: str, outcome: str, checkpoints: list[tuple[str, str, float | None]]) -> None:
        line = Text("▸ ", style="bold") + Text(title)
        if outcome:
            line += Text(f"  {outcome}", style="dim")
        options = [Option(line, disabled=True)]
        for checkpoint_id, label, created in checkpoints:
            stamp = time.strftime("%H:%M ", time.localtime(created)) if created else ""
            self.labels[checkpoint_id] = label
            options.append(Option(Text(f"  ↺ {stamp}{checkpoint_id[:7]} {label}  ") + Text("restore", style="underline"),
                                  id=checkpoint_id))
        self.add_options(options)

    def action_restore(self) -> None:
        if self.highlighted is not None:
            self._restore(self.get_option_at_index(self.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._restore(event.option.id)

    def _restore(self, checkpoint_id: str | None) -> None:
        from tui.widgets.timeline import Timeline

        if checkpoint_id:
            self.post_message(Timeline.RestoreRequested(checkpoint_id, self.labels.get(checkpoint_id, "")))
