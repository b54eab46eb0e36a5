"""The busy indicator: one character at the end of the prompt line while the agent works.

Each frame replaces that one character in a single transaction (delete + insert), so peers see a
flicker-free spin. Two sticky indices bound to our character tell whether it still exists: they
resolve one character apart while it does and to the same offset once anyone deleted it. If it was
deleted (our own edit removes it too) the next frame puts it back at the end of the prompt line,
as long as that line still mentions the agent. `stop` removes it whatever happened.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from pycrdt import Assoc, Text

log = logging.getLogger(__name__)

FRAMES = "|/-\\"
INTERVAL = 0.25


class Spinner:
    def __init__(self, text: Text, line: Any, mention: re.Pattern[str], interval: float = INTERVAL) -> None:
        """line: a sticky index bound to the first character of the prompt line."""
        self.text = text
        self.mention = mention
        self.interval = interval
        self._frame = 0
        self._line: Any = line
        self._left: Any = None  # our character, seen from its left
        self._right: Any = None  # our character, seen from its right
        self._task: asyncio.Task[None] | None = None

    def span(self) -> tuple[int, int] | None:
        """(byte offset, 1) of our character while it is in the text, else None."""
        if self._left is None or self._right is None:
            return None
        with self.text.doc.transaction() as txn:
            left = self._left.get_offset(txn._txn)
            right = self._right.get_offset(txn._txn)
        return (left, 1) if right - left == 1 else None

    def _line_end(self) -> int | None:
        """Byte offset of the end of the prompt line, when it still mentions the agent."""
        if self._line is None:
            return None
        raw = str(self.text).encode("utf-8")
        start = self._line.get_index()
        end = raw.find(b"\n", start)
        end = len(raw) if end == -1 else end
        line = raw[start:end].decode("utf-8", "replace").rstrip("\r")
        if not self.mention.search(line):
            return None
        return end - 1 if raw[start:end].endswith(b"\r") else end

    def _put(self, offset: int, replace: bool) -> None:
        char = FRAMES[self._frame % len(FRAMES)]
        with self.text.doc.transaction():
            if replace:
                del self.text[offset : offset + 1]
            self.text.insert(offset, char)
        self._left = self.text.sticky_index(offset, Assoc.AFTER)
        self._right = self.text.sticky_index(offset + 1, Assoc.BEFORE)

    def step(self) -> None:
        """Show the next frame (or put the character back if it went missing)."""
        self._frame += 1
        span = self.span()
        if span is not None:
            self._put(span[0], replace=True)
            return
        end = self._line_end()
        if end is not None:
            self._put(end, replace=False)
        else:
            self._left = self._right = None

    def start(self) -> None:
        """Insert the character now and keep it spinning in the background."""
        end = self._line_end()
        if end is not None:
            self._put(end, replace=False)
        self._task = asyncio.create_task(self._spin())

    async def _spin(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                self.step()
            except Exception:  # never let the indicator break a run
                log.exception("spinner frame failed")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        span = self.span()
        if span is not None:
            with self.text.doc.transaction():
                del self.text[span[0] : span[0] + 1]
        self._left = self._right = None
