"""Filling the workspace / room pane: facts gathered off the event loop, then shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.appcontext import later
from tui.widgets.panes import WorkspacePane, local_info

if TYPE_CHECKING:
    from agent.workspaces.base import Workspace
    from tui.app import CoderApp


def refresh_pane(app: CoderApp) -> None:
    """Show the current workspace's facts in the pane (git and checkpoints are read in a thread)."""
    pane = app.query_one(WorkspacePane)
    bridge = app.bridge
    if bridge.room is not None:
        pane.show_room(bridge.room.status, bridge.room.failed)
        return
    workspace = bridge.workspace
    if workspace is None:
        return
    if getattr(workspace, "github", None) is not None:
        from tui.widgets.statusbar import StatusBar

        if workspace.kind == "github":  # the repository can change mid-session (/repo, set_repository_context)
            app.query_one("#status", StatusBar).set_workspace(workspace.label)
        gather = later(_github, pane, workspace)
    elif workspace.root is not None:
        gather = later(_local, app, pane, workspace)
    else:
        return
    app.run_worker(gather, name="pane", group="pane", exclusive=True, exit_on_error=False)


async def _local(app: CoderApp, pane: WorkspacePane, workspace: Workspace) -> None:
    import asyncio

    session = app.bridge.session
    checkpoints = session.checkpoints if session is not None else None
    info = await asyncio.to_thread(local_info, str(workspace.root), checkpoints)
    pane.show_local(info)


async def _github(pane: WorkspacePane, workspace: Workspace) -> None:
    import asyncio

    from agent.session.github import status

    repo = await asyncio.to_thread(status, workspace)  # a clone asks git for its changed files
    if repo is not None:
        pane.show_github(repo, clone=workspace.kind != "github")
