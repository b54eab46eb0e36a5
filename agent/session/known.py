"""Whether a session reference names a recorded session, checked before anything heavy loads: the
app (`coder-tui --resume ID`, `coder-tui attach ID`) refuses an unknown id before it opens, with the
line `run --resume ID` says (the message of `SessionStore.resolve`, agent/session/record.py)."""

from __future__ import annotations

import os
from pathlib import Path

from agent import paths

UNCHECKED = ("", "new", "last")  # nothing to find (`new`, the picker), or found by its folder (`last`): the opener's


def missing_session(ref: str, directory: Path | None = None) -> str | None:
    """Why `ref` (a session id or a unique prefix) names no recorded session; None when it may name one.

    A session file named so is enough here (one directory listing: no file read, nothing heavy
    imported); the opener finds the rest as before (an ambiguous prefix, a file without a
    conversation). Only when no file is named so is the store asked, for the message it gives.
    """
    if ref in UNCHECKED:
        return None
    folder = directory or paths.sessions_dir()
    try:
        names = os.listdir(folder)
    except OSError:  # no session recorded yet
        names = []
    if any(name.startswith(ref) and name.endswith(".jsonl") for name in names):
        return None
    from agent.session.record import SessionError, SessionStore

    try:
        SessionStore(folder).resolve(ref)
    except SessionError as exc:
        return str(exc)
    return None
