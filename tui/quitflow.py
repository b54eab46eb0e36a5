"""Ctrl+C and Ctrl+Q: copy a selection, stop a run, or quit after a second press; a run or
unpublished GitHub edits are confirmed first, then the bridge shuts down."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tui.widgets.statusbar import StatusBar

if TYPE_CHECKING:
    from tui.app import CoderApp

QUIT_WINDOW = 2.0  # seconds in which a second Ctrl+C quits


def interrupt(app: CoderApp) -> None:
    selected = getattr(app.focused, "selected_text", "") or app.screen.get_selected_text()
    if selected:  # Ctrl+C with text selected copies it, as everywhere else
        app.copy_to_clipboard(selected)
        app.notify("Copied.", timeout=1.5)
        return
    if app.bridge.running:
        app.action_stop()
        return
    now = time.monotonic()
    if now - app.last_interrupt < QUIT_WINDOW:
        app.run_worker(quit_app(app), exit_on_error=False)
        return
    app.last_interrupt = now
    app.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW)


async def confirm_quit(app: CoderApp) -> None:
    if app.bridge.running and app.bridge.driver is None:  # attached: the run goes on in the host
        from tui.screens.confirm import ConfirmScreen

        if not await app.push_screen_wait(ConfirmScreen("The agent is working. Stop it and quit?", "Quit")):
            return
    await quit_app(app)


async def quit_app(app: CoderApp) -> None:
    from tui.screens.unpublished import settle_unpublished

    farewell = await settle_unpublished(app)  # GitHub edits not yet published: ask first
    if farewell is False:
        return
    app.query_one("#status", StatusBar).set_state("leaving" if app.bridge.room else "closing")
    await app.bridge.shutdown()
    app.exit(0, message=farewell)
