"""The items of one session handle: kept (the history a late reader gets) and given to every
reader of `events()` (each its own queue, so a slow one holds up nobody)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from agent import events as ev

Item = object
_END = object()


class Fanout:
    def __init__(self) -> None:
        self.log: list[Item] = []
        self._text: list[str] = []  # streamed text since the log's last item (joined when read)
        self._readers: list[asyncio.Queue[object]] = []
        self._listeners: list[Callable[[Item], None]] = []
        self.closed = False

    def listen(self, listener: Callable[[Item], None]) -> None:
        """`listener(item)` for each item from now on, called as it comes (before a prompt it ends
        is answered): for a front end that must see a turn's last event before its reply."""
        self._listeners.append(listener)

    def publish(self, item: Item) -> None:
        if isinstance(item, ev.TextDelta):
            self._text.append(item.text)
        else:
            self._join()
            self.log.append(item)
        for listener in list(self._listeners):
            listener(item)
        for queue in self._readers:
            queue.put_nowait(item)

    def history(self) -> list[Item]:
        self._join()
        return list(self.log)

    def _join(self) -> None:
        if self._text:
            self.log.append(ev.TextDelta(text="".join(self._text)))
            self._text = []

    def stream(self) -> AsyncIterator[Item]:
        """Every item from this call on (the reader is registered now, not at the first read)."""
        queue: asyncio.Queue[object] = asyncio.Queue()
        if self.closed:
            queue.put_nowait(_END)
        else:
            self._readers.append(queue)
        return self._drain(queue)

    async def _drain(self, queue: asyncio.Queue[object]) -> AsyncIterator[Item]:
        try:
            while (item := await queue.get()) is not _END:
                yield item
        finally:
            if queue in self._readers:
                self._readers.remove(queue)

    def close(self) -> None:
        self.closed = True
        for queue in self._readers:
            queue.put_nowait(_END)


class FanoutFace:
    """What LocalHandle and HostedHandle share: the reading half over their `fanout`, their name
    and the approvals waiting in their session."""

    fanout: Fanout
    _name: str
    _pending: list[str]

    @property
    def name(self) -> str:
        return self._name

    @property
    def pending(self) -> list[str]:
        return list(self._pending)

    def events(self) -> AsyncIterator[Item]:
        return self.fanout.stream()

    def history(self) -> list[Item]:
        return self.fanout.history()

    def listen(self, listener: Callable[[Item], None]) -> None:
        self.fanout.listen(listener)
