"""Where the agent works, shown as every OCT peer shows itself: its cursor (the awareness
selection) at the start of the prompt line it answers, with its name beside it in the host's editor.

Nothing is written into the document for it: a busy character there was an edit of the host's own
file (in their undo history and their unsaved changes, and in the file whenever they saved).

The cursor is a Yjs relative position (`RelativeTextPosition` of the OCT protocol: the item it
sticks to). pycrdt makes it from an index in UTF-8 bytes, which counts as Yjs does only while the
text before it is ASCII; otherwise the selection names the document alone (no cursor rather than
one on the wrong line).
"""

from __future__ import annotations

from typing import Any

from pycrdt import Assoc, Text

LEFT_TO_RIGHT = 1  # the protocol's SelectionDirection


def cursor_at(text: Text, offset: int) -> dict[str, Any] | None:
    """The relative position of UTF-8 `offset` in `text`, or None where it cannot be told exactly."""
    raw = str(text).encode("utf-8")
    if offset >= len(raw) or not raw[:offset].isascii():
        return None  # the end of a text has no item to stick to; non-ASCII before it: see above
    sticky = text.sticky_index(offset, Assoc.AFTER).to_json()
    return {"type": sticky.get("type"), "tname": sticky.get("tname"), "item": sticky.get("item"),
            "assoc": sticky.get("assoc", 0)}


def selection(path: str, text: Text | None = None, offset: int | None = None) -> dict[str, Any]:
    """The awareness selection for `path`, with the cursor at `offset` when it can be placed."""
    position = cursor_at(text, offset) if text is not None and offset is not None else None
    ranges = [{"start": position, "end": position, "direction": LEFT_TO_RIGHT}] if position else []
    return {"path": path, "textSelections": ranges}
