"""Event ids and `Last-Event-ID` for `POST /api/chat` streams (seed 002).

Every SSE frame of a turn carries `id: N`, monotonic per session (across its turns). The frames of
a session's latest turn are kept until its next turn starts, so a client whose connection drops
re-issues its request with `Last-Event-ID: N` (what an EventSource-style client does) naming the
session (`X-Session-Id`, which the response carried, or `session_id` in the body) and receives what
it missed, then the rest as it happens. A turn nobody is connected to goes on for the grace period
(`--reconnect-grace`, 30 s by default) and is stopped as before when nobody came back; its approvals
wait for a client meanwhile (nothing answers them on the user's behalf).
"""

from __future__ import annotations

import asyncio
from typing import Any

Data = dict[str, Any]
Frame = tuple[int, Data]
GRACE = 30.0


class TurnFrames:
    """A session's latest turn as numbered frames, and a wake-up for those who stream it."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.next_id = 1
        self.ended = True
        self._changed = asyncio.Event()

    def begin(self) -> None:
        self.frames, self.ended = [], False
        self._wake()

    def add(self, data: Data) -> None:
        self.frames.append((self.next_id, data))
        self.next_id += 1
        self._wake()

    def end(self) -> None:
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    @property
    def first_id(self) -> int:
        return self.frames[0][0] if self.frames else self.next_id

    def check(self, last_id: int) -> str | None:
        """Why `Last-Event-ID: last_id` cannot be continued here (None: it can)."""
        if last_id >= self.next_id:
            return f"Last-Event-ID {last_id} was never sent by this session (its last id is {self.next_id - 1})"
        if last_id < self.first_id - 1:
            return (f"Last-Event-ID {last_id} belongs to an earlier turn; the session has moved on "
                    f"(its latest turn starts at id {self.first_id})")
        return None

    async def after(self, last_id: int, keepalive: float) -> list[Frame] | None:
        """The frames after `last_id`, waiting for some; [] after `keepalive` seconds of nothing;
        None once the turn has ended and everything was given."""
        while True:
            new = [item for item in self.frames if item[0] > last_id]
            if new:
                return new
            if self.ended:
                return None
            try:
                await asyncio.wait_for(self._changed.wait(), keepalive)
            except TimeoutError:
                return []


def last_event_id(header: str | None) -> int | None:
    """The `Last-Event-ID` header as a number (None when absent); ValueError for anything else."""
    if header is None or not header.strip():
        return None
    value = int(header.strip())
    if value < 0:
        raise ValueError(header)
    return value
