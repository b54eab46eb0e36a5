"""The app's agent core, loaded after the first frame, and litellm when the model needs it.

The core's import starts as soon as the first frame is on screen, beside the rest of the layout;
boot waits for it. A model the built-in clients serve needs nothing more; a model on the litellm
path (agent/llm/routing.py) starts litellm's import (seconds) in a thread as soon as it is known.
"""

from __future__ import annotations

import asyncio

_core: asyncio.Future[None] | None = None


def _import_core() -> None:
    import agent.session.core  # noqa: F401 - the agent core: events, tools, workspaces, sessions
    import agent.workspaces.local  # noqa: F401


def start_core_import() -> None:
    """The agent core's import, started in a thread (once per event loop)."""
    global _core
    loop = asyncio.get_running_loop()
    if _core is None or _core.get_loop() is not loop:
        _core = asyncio.ensure_future(asyncio.to_thread(_import_core))


async def core_imported() -> None:
    start_core_import()
    assert _core is not None
    await asyncio.shield(_core)


def start_model_library(model: str | None, api_base: str | None = None, path: str | None = None) -> bool:
    """litellm loading in a thread when `model` needs it (whether it does)."""
    from agent.llm.preload import warm_for

    return warm_for(model, api_base, path)
