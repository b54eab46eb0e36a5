"""Start loading the model layer (litellm) in a background thread, once per process (issue 22).

Importing litellm takes seconds. `run` starts it here as its first act so that it overlaps with
everything else it does before its first request (the agent core's own imports, the config, the
workspace, the session); the app after its first frame (tui/boot.py); `serve` and `acp` once their
own imports are done (the load competes with them for the interpreter: started at launch it
delayed `initialize` from 2.2 to 5.0 s and serve's banner from 2.1 to 3.0 s on a busy machine).
Anything that needs litellm then waits for the same load (`agent.llm.ensure_loaded`); nothing
imports it twice. Light on purpose: importing this module imports nothing of the model layer.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager

_lock = threading.Lock()
_loading: Future[None] | None = None


def start_loading() -> Future[None]:
    """The load of litellm (agent.llm.prewarm) in a daemon thread: started by the first call,
    shared by the others; a load that failed (or was undone) is started again."""
    global _loading
    with _lock:
        if _loading is None or _spent(_loading):
            _loading = Future()
            threading.Thread(target=_load, args=(_loading,), name="load-litellm", daemon=True).start()
        return _loading


def _spent(loading: Future[None]) -> bool:
    """A load that failed, or whose result is gone (agent.llm no longer loaded: tests reset it)."""
    if not loading.done():
        return False
    llm = sys.modules.get("agent.llm")
    return loading.exception() is not None or llm is None or not llm.is_loaded()


def _load(future: Future[None]) -> None:
    try:
        from agent.llm import prewarm

        prewarm()
    except BaseException as exc:  # noqa: BLE001 - handed to whoever waits; the first request reports it
        future.set_exception(exc)
    else:
        future.set_result(None)


@contextmanager
def collections_paused() -> Iterator[None]:
    """No cyclic garbage collection while the model library loads, then its objects frozen out.

    The import creates about a million long-lived objects: collections during it walk them again
    and again (about a fifth of the import's time), and left in the collected generations every
    later full collection walks them too (0.3-0.6 s pauses of every thread, mid-run).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
