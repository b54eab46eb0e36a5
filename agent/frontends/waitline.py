"""A line on the terminal while a command waits for something slow, erased when the wait ends.

A cold `coder-tui run` waits seconds for its model library (litellm) before it prints anything
(issue 22): without a word the terminal looks hung. The line shows only on a terminal, only when
the wait lasts (a warm process never shows it), and goes before anything else is printed there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

DELAY = 0.3  # seconds a wait lasts before it is said
LOADING = "coder-tui: loading model support…"  # short: a wrapped line would not be erased whole
ERASE = "\r\x1b[K"


@asynccontextmanager
async def said_while_waiting(stream: TextIO, text: str, delay: float = DELAY) -> AsyncIterator[None]:
    """`text` on `stream` (a terminal; otherwise nothing) once the block has run `delay` seconds,
    erased when it ends."""
    if not _is_terminal(stream):
        yield
        return
    shown = False

    def show() -> None:
        nonlocal shown
        shown = True
        stream.write(text)
        stream.flush()

    timer = asyncio.get_running_loop().call_later(delay, show)
    try:
        yield
    finally:
        timer.cancel()
        if shown:
            stream.write(ERASE)
            stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or stand-in stream
        return False
