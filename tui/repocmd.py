"""`/repo [OWNER/REPO[@REF]]`: show or switch the GitHub repository of the session (seed 001).

The switch is agent/github/switch.py's, the same as the model's `set_repository_context` tool:
refused with the reason while there are unpublished edits, in `--clone` sessions and in a local
folder. The workspace pane shows the new repository afterwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.app import CoderApp


async def repo_command(app: CoderApp, arg: str) -> None:
    from agent.github.errors import GitHubError
    from agent.github.switch import describe, switch_repository
    from tui.commands import _idle, _say

    session = app.bridge.session if not arg else _idle(app, "/repo")
    if session is None:
        if not arg:
            _say(app, "/repo needs the agent to be ready; it is still loading or could not start.", "warning")
        return
    try:
        if not arg:
            _say(app, f"repository: {describe(session.workspace)}; /repo OWNER/REPO[@REF] switches")
            return
        _say(app, f"Switching to {arg}…", "dim")
        now = await switch_repository(session.workspace, arg)
    except GitHubError as exc:
        _say(app, f"/repo: {exc}", "error")
        return
    _say(app, f"Now working on {now}", "success")
    app.refresh_pane()
