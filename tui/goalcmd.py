"""`/goal [--rounds N] CMD` in the app: rounds of work until the check passes (agent/subagents/goal.py);
the status bar shows the rounds and the last check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.widgets.statusbar import StatusBar
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui.app import CoderApp


def _say(app: CoderApp, text: str) -> None:
    app.query_one(Transcript).notice(text, "warning")


def _idle(app: CoderApp) -> bool:
    from tui.commands import _idle as idle

    return idle(app, "/goal") is not None


async def goal_command(app: CoderApp, arg: str) -> None:
    """`/goal [--rounds N] CMD`: rounds of work until CMD exits 0 (agent/subagents/goal.py)."""
    from agent.subagents.goal import DEFAULT_ROUNDS

    rounds, check = DEFAULT_ROUNDS, arg.strip()
    if check.startswith("--rounds"):
        _, _, rest = check.partition(" ")
        number, _, check = rest.strip().partition(" ")
        if not number.isdigit() or int(number) < 1:
            _say(app, f"/goal --rounds takes a whole number of at least 1, not {number!r}")
            return
        rounds, check = int(number), check.strip()
    if not check:
        _say(app, "/goal CMD: the agent works, runs CMD in the folder after each round and goes on (with its "
                  "output) until it exits 0; /goal --rounds N CMD sets the most rounds (default 10)")
        return
    if not _idle(app):
        return
    app.query_one("#status", StatusBar).set_goal(0, rounds, None)
    app.bridge.start_goal(check, rounds)
