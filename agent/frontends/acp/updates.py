"""One session's `session/update` notifications, sent in the order the events came.

The core emits events synchronously; sending is async. Updates wait in a queue that one task
drains, so they reach the client in order, and `flush()` lets a request that must come after
them (a permission request, the prompt's response) wait until they are out.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("coder_tui.acp")


class UpdateStream:
    def __init__(self, conn: Any, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def send(self, update: Any) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._pump(), name=f"acp-updates-{self.session_id}")
        self._queue.put_nowait(update)

    async def flush(self) -> None:
        """Return once every update sent so far has been written to the client."""
        if self._task is not None:
            await self._queue.join()

    async def _pump(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self.conn.session_update(session_id=self.session_id, update=update)
            except ConnectionError:
                pass  # the client is gone; the run is being stopped
            except Exception:  # one bad update must not silence the ones after it
                log.exception("could not send a session update")
            finally:
                self._queue.task_done()

    async def close(self) -> None:
        await self.flush()
        if self._task is not None:
            self._task.cancel()
