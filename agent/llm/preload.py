"""litellm's import: in a background thread, once per process, and only when a model needs it.

Only the models of the litellm path (agent/llm/routing.py) need litellm, and importing it takes
seconds: `warm_for(model)` starts the import in a thread then, and only then, so that it overlaps
with everything else a front end does before its first request. Anything that needs litellm
waits for the same load (`agent.llm.litellm_client.ensure_loaded`); nothing imports it twice.
Light on purpose: importing this module imports nothing of litellm or the rest of the model layer.
"""

from __future__ import annotations

import gc
import os
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_loading: Future[None] | None = None


def start_loading() -> Future[None]:
    """The load of litellm (`prewarm`) in a daemon thread: started by the first call,
    shared by the others; a load that failed (or was undone) is started again."""
    global _loading
    with _lock:
        if _loading is None or _spent(_loading):
            _loading = Future()
            threading.Thread(target=_load, args=(_loading,), name="load-litellm", daemon=True).start()
        return _loading


def _spent(loading: Future[None]) -> bool:
    """A load that failed, or whose result is gone (tests reset `_warm`)."""
    if not loading.done():
        return False
    return loading.exception() is not None or not _warm


def _load(future: Future[None]) -> None:
    try:
        prewarm()
    except BaseException as exc:  # noqa: BLE001 - handed to whoever waits; the first request reports it
        future.set_exception(exc)
    else:
        future.set_result(None)


def litellm_loading() -> bool:
    """litellm's import is under way (started, not finished)."""
    with _lock:
        return _loading is not None and not _loading.done()


def warm_for(model: str | None, api_base: str | None = None, path: str | None = None) -> bool:
    """Start loading litellm when requests for `model` go through it; whether they do."""
    if not model:
        return False
    from agent.llm.routing import needs_litellm

    if not needs_litellm(model, api_base, path):
        return False
    start_loading()
    return True


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


_startup = False  # collections paused by pause_startup(), not settled yet


def pause_startup() -> None:
    """No cyclic garbage collection while a one-shot process (`coder-tui run`) imports the agent
    core and opens its session: the collections walk the same long-lived objects (modules,
    classes, schemas) again and again, about 4% of a cold run's instructions. `settle()` at the
    first model request freezes what exists then (never walked again) and collects as usual after."""
    global _startup
    if gc.isenabled():
        gc.disable()
        _startup = True


def settle() -> None:
    """End pause_startup's pause (once; nothing when there was none)."""
    global _startup
    if _startup:
        _startup = False
        gc.freeze()
        gc.enable()


_warm = False
_prewarming = threading.Lock()


def load_litellm() -> Any:
    """Import litellm with its network-free cost map and quiet defaults."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    litellm.telemetry = False
    # We register no litellm loggers or caches; skip its per-stream logging thread work.
    litellm.disable_streaming_logging = True
    # litellm prices every streamed request by tokenizing the whole conversation, for a number
    # nobody reads: usage comes from the provider (when it does not, we show 0).
    litellm.disable_token_counter = True
    # Responses-API models: a request with a reasoning effort also asks for the reasoning summary.
    litellm.reasoning_auto_summary = True
    # litellm's Responses bridge makes pydantic warn on stderr at every reply (over the app's screen).
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
    return litellm


def prewarm() -> None:
    """Import litellm and what its first request imports (about 3 s and 500 modules together);
    once per process: a second caller waits for the first."""
    global _warm
    with _prewarming:
        if _warm:
            return
        with collections_paused():
            load_litellm()
            import openai.resources  # noqa: F401 - its first request imports every API resource
        _warm = True


def is_loaded() -> bool:
    return _warm


