"""Textual's context around what the agent's side calls into the app."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from textual._context import active_app


@contextmanager
def in_context(app: Any) -> Iterator[None]:
    """Textual's context (its `active_app`) around code the agent's side calls, whichever
    task or callback calls it. A timer set or a widget mounted outside that context starts a
    task without it: the transcript's flush timer, set by an answer's first text, then died
    on its first tick (LookupError: active_app) and the error surfaced when the app stopped
    its timers at exit."""
    try:
        current = active_app.get()
    except LookupError:
        current = None
    if current is app:
        yield
        return
    with app._context():
        yield
