"""`/live` in the app: which session needs you. This app's session and the session host's live
ones, each with its subagents: working (on which tool), waiting for you (on what), done or failed,
with their spend (agent/subagents/live.py). `/attach ID` jumps into a host session."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui.app import CoderApp


def own_row(app: CoderApp) -> dict[str, Any] | None:
    """This app's in-process session as the host lists its own (None: none, or attached to the host)."""
    from agent.subagents.live import spend_and_children

    session = app.bridge.session
    if session is None:
        return None
    return {"session_id": session.session_id, "workspace": session.workspace.label, "running": session.running,
            "pending_approvals": session.pending_approvals, **spend_and_children(session)}


async def live_command(app: CoderApp, arg: str) -> None:
    from agent.client.hosted import live_sessions
    from agent.frontends.fleetlive import fleet_live_lines
    from agent.subagents.live import live_lines

    rows = [row for row in [own_row(app)] if row is not None]
    hosted = await live_sessions() or []
    rows += [row for row in hosted if all(row["session_id"] != mine["session_id"] for mine in rows)]
    fleet = await asyncio.to_thread(fleet_live_lines)  # Redis is asked only when a broker is configured
    if not rows and not fleet:
        app.query_one(Transcript).notice("no live session: start one, or the session host (`coder-tui host`)")
        return
    jump = "\n/attach ID jumps into a session of the host." if hosted else ""
    shown = ["Live sessions:", *live_lines(rows)] if rows else []
    app.query_one(Transcript).notice("\n".join([*shown, *fleet]) + jump)
