"""Keys typed for the prompt stay the prompt's when a screen opens over it meanwhile.

The setup screen can open while the user is typing a first prompt (after the first frame the app
finds that no model is usable). The keys still coming were meant for the prompt: in the form's
first field they made a model name of the prompt. Until the user moves into the form (Tab, a
click), what they type goes on into the prompt behind the screen, which sends it once the agent
is ready.
"""

from __future__ import annotations

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TextArea

from tui.widgets.prompt_standin import PromptStandIn

# Editing keys the prompt runs as bindings (a key posted to it only inserts printable text).
EDIT_ACTIONS = {"backspace": "delete_left", "delete": "delete_right"}
TYPING_KEYS = frozenset({"enter", *EDIT_ACTIONS})


def typing_target(below: Screen[object] | None) -> Widget | None:
    """The prompt of the screen below when the user has typed into it and not sent it yet."""
    focused = below.focused if below is not None else None
    if isinstance(focused, TextArea) and focused.text.strip():
        return focused
    if isinstance(focused, PromptStandIn) and focused.holds_keys:
        return focused
    return None


def is_typing(event: events.Key | events.Paste) -> bool:
    """Text, Enter and deletions; other keys (Tab, Esc, shortcuts) stay the screen's."""
    return isinstance(event, events.Paste) or event.is_printable or event.key in TYPING_KEYS


def forward(event: events.Key | events.Paste, target: Widget) -> None:
    """Give `target` what the user typed, in the order typed."""
    event.stop()
    event.prevent_default()
    if isinstance(event, events.Paste):
        target.post_message(events.Paste(event.text))
        return
    action = EDIT_ACTIONS.get(event.key)
    if action is not None and isinstance(target, TextArea):
        target.call_later(getattr(target, f"action_{action}"))  # queued behind the keys before it
        return
    target.post_message(events.Key(event.key, event.character))
