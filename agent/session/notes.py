"""What a front end tells the user on opening a recorded session, and the notes the model reads
about what happened outside its turns (a restore of the files, a stopped answer)."""

from __future__ import annotations

from typing import Any


def resume_notes(session: Any) -> list[str]:
    """Warnings about a resumed session: lines of its file set aside, a lock taken over."""
    notes = []
    data = session.restored
    if data is not None and data.damaged_lines:
        notes.append(f"{data.damaged_lines} damaged line(s) of session {session.session_id}'s file were set "
                     "aside (not of the expected shape); the rest of the session is resumed")
    lock = getattr(session.writer, "lock", None)
    if lock is not None and lock.took_over is not None:
        notes.append(f"session {session.session_id} was left locked by {lock.took_over.describe()}, which is "
                     "no longer running; this process took it over")
    return notes
