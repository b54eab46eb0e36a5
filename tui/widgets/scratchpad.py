"""The agent's own notes in the side panel (seed 001's scratchpad and observations), between the
timeline and the workspace pane; mounted when the agent first writes them."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

SHOWN_OBSERVATIONS = 5


class ScratchpadPane(Static):
    DEFAULT_CSS = """
    ScratchpadPane {
        height: auto;
        max-height: 30%;
        border: round $foreground 25%;
        border-title-color: $text-muted;
        padding: 0 1;
        color: $text-muted;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Agent's notes"

    def show(self, text: str, observations: list[str]) -> None:
        shown = Text(text.strip())
        if observations:
            if text.strip():
                shown.append("\n")
            hidden = len(observations) - SHOWN_OBSERVATIONS
            if hidden > 0:
                shown.append(f"… {hidden} earlier observation{'s' if hidden != 1 else ''}\n", style="dim")
            shown.append("\n".join(f"• {o}" for o in observations[-SHOWN_OBSERVATIONS:]))
        self.update(shown)


def show_scratchpad(timeline: Widget, event: Any) -> None:
    """Show the notes of a `scratchpad` event under the timeline (the pane mounted the first time)."""
    side = timeline.parent
    if side is None:
        return
    # kept on the side panel: two events in a row come before the first pane is mounted, and a
    # query would not find it yet
    pane = getattr(side, "scratchpad_pane", None)
    if pane is None:
        pane = ScratchpadPane(id="scratchpad")
        side.scratchpad_pane = pane  # type: ignore[attr-defined]
        side.mount(pane, after=timeline)
    pane.show(event.text, list(event.observations))
