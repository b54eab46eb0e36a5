"""The thread where litellm's requests run (the litellm path only; the built-in clients stream on
the caller's own event loop).

Preparing a litellm request walks the whole conversation in the OpenAI SDK's pure-Python
transforms (about 0.3 s for a 500-turn history) and parsing its streamed chunks takes time too: on
the caller's loop that stalls a UI, a room's document sync or another run. The caller awaits the
result; streamed text is handed back to its loop in order; cancelling the caller cancels the
request.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from typing import Any

from agent.llm.types import TextHook


class _RequestLoop:
    """One daemon thread with its own event loop, where every litellm request runs.

    At exit the thread's work is wound down before the interpreter finalizes: a daemon thread
    frozen there while it holds an import lock (litellm imports lazily mid-request) deadlocks
    the finalizers that import, and the process never ends.

    The loop runs one long-lived host task (run_until_complete, not run_forever): AnyIO, which
    litellm uses to assemble a finished stream in a worker thread, keeps its idle worker
    threads for the life of the loop's root task. Without one, each request is its own root and
    every call started (and stopped) a new thread, about 2 ms a step.
    """

    _instance: _RequestLoop | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._finished = self.loop.create_future()
        self._host = self.loop.create_task(_host(self._finished), name="model-requests-host")
        self.thread = threading.Thread(target=self._serve, name="model-requests", daemon=True)
        self.thread.start()
        atexit.register(self.shutdown)

    def _serve(self) -> None:
        self.loop.run_until_complete(self._host)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Cancel what still runs on the thread, wait for it, and stop the thread."""
        with self._lock:
            if _RequestLoop._instance is self:
                _RequestLoop._instance = None
        if not self.thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(_wind_down(self._host), self.loop).result(timeout)
        except Exception:  # noqa: BLE001 - exiting anyway; the thread is stopped below
            pass
        self.loop.call_soon_threadsafe(_settle, self._finished)
        self.thread.join(timeout)

    @classmethod
    def get(cls) -> _RequestLoop:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    async def run(self, coroutine: Any) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))


async def _host(finished: asyncio.Future[None]) -> None:
    await finished


async def _wind_down(host: asyncio.Task[None]) -> None:
    """Cancel every request on this loop and wait for them and the loop's worker threads."""
    requests = [t for t in asyncio.all_tasks() if t not in (host, asyncio.current_task())]
    for task in requests:
        task.cancel()
    await asyncio.gather(*requests, return_exceptions=True)
    loop = asyncio.get_running_loop()
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def on_caller_loop(hook: TextHook) -> TextHook:
    """`hook`, called on the current loop whichever thread calls the returned function."""
    loop = asyncio.get_running_loop()

    def handed_over(text: str) -> None:
        loop.call_soon_threadsafe(hook, text)

    return handed_over


def request_loop() -> _RequestLoop:
    """The thread where litellm's requests run."""
    return _RequestLoop.get()
