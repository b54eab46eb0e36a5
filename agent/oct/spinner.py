"""The busy indicator: one character at the end of the prompt line while the agent works.

Each frame replaces that one character in a single transaction (delete + insert), so peers see a
flicker-free spin. Two sticky positions bound to our character tell whether it still exists: they
resolve one byte apart while it does and to the same offset once anyone deleted it. If it was
deleted (our own edits remove it too) the next frame puts it back at the end of the prompt line,
as long as that line still mentions the agent. `stop` removes it whatever happened.
"""

from __future__ import annotations

import asyncio
import logging
import re

from agent.oct.positions import AFTER, BEFORE, Anchor, PositionLog

log = logging.getLogger(__name__)

FRAMES = "|/-\\"
INTERVAL = 0.25


class Spinner:
    def __init__(self, positions: PositionLog, line: Anchor | None, mention: re.Pattern[str],
                 interval: float = INTERVAL) -> None:
        """line: bound to the first character of the prompt line."""
        self.positions = positions
        self.text = positions.text
        self.mention = mention
        self.interval = interval
        self.frames = 0
        self._line = line
        self._left: Anchor | None = None  # our character, seen from its left
        self._right: Anchor | None = None  # our character, seen from its right
        self._task: asyncio.Task[None] | None = None

    def spans(self) -> list[tuple[int, int]]:
        """The mask for `agent.oct.anchors`: our character's span, if it is in the text."""
        span = self.span()
        return [span] if span else []

    def span(self) -> tuple[int, int] | None:
        """(UTF-8 offset, 1) of our character while it is in the text, else None."""
        if self._left is None or self._right is None:
            return None
        left, right = self._left.resolve(), self._right.resolve()
        return (left, 1) if right - left == 1 else None

    def _line_end(self, raw: bytes) -> int | None:
        """UTF-8 offset of the end of the prompt line, when it still mentions the agent."""
        if self._line is None:
            return None
        start = self._line.resolve()
        end = raw.find(b"\n", start)
        end = len(raw) if end == -1 else end
        if end > start and raw[end - 1 : end] == b"\r":
            end -= 1
        if not self.mention.search(raw[start:end].decode("utf-8", "replace")):
            return None
        return end

    def _put(self, offset: int, replace: bool) -> None:
        char = FRAMES[self.frames % len(FRAMES)]
        with self.text.doc.transaction():
            if replace:
                del self.text[offset : offset + 1]
            self.text.insert(offset, char)
        self._left = self.positions.anchor(offset, AFTER)
        self._right = self.positions.anchor(offset + 1, BEFORE)

    def step(self) -> None:
        """Show the next frame (or put the character back if it went missing)."""
        self.frames += 1
        span = self.span()
        if span is not None:
            self._put(span[0], replace=True)
            return
        end = self._line_end(str(self.text).encode("utf-8"))
        if end is not None:
            self._put(end, replace=False)
        else:
            self._left = self._right = None

    def start(self) -> None:
        """Insert the character now and keep it spinning in the background."""
        end = self._line_end(str(self.text).encode("utf-8"))
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
            del self.text[span[0] : span[0] + 1]
        self._left = self._right = None
