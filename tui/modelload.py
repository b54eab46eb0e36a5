"""The app's model library (litellm, seconds to import) and agent core, loaded after the first frame.

The core's import starts as soon as the first frame is on screen, beside the rest of the layout;
boot waits for it. litellm loads in a thread once the session opens, unless a warm session host
lends its own meanwhile (agent/llm_borrow.py): then the first prompts are answered at once
through it, and the import here waits `LATER` seconds (it holds the interpreter for seconds and
would slow the app and that first answer).
"""

from __future__ import annotations

import asyncio

LATER = 20.0  # seconds before the app loads its own litellm when a host lends meanwhile

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


async def start_model_library(run_task: object) -> None:
    """litellm loading in a thread now, or in `LATER` seconds when a warm host lends its own."""
    from agent.llm_borrow import available, enabled
    from agent.llm_preload import start_loading

    if enabled() and await available():
        run_task(_load_later(), name="load-models-later")  # type: ignore[operator]
        return
    start_loading()  # also freezes its objects out of full collections


async def _load_later() -> None:
    from agent.llm_preload import start_loading

    await asyncio.sleep(LATER)
    start_loading()
