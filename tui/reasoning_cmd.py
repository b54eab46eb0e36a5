"""`/reasoning [off | low | medium | high]`: the model's reasoning effort for this session.

A change made while a turn runs applies from the next prompt (a tool loop keeps one thinking
setting); a level turned on while the conversation is inside a Claude tool loop that ran without
thinking (a stopped turn) starts when the model ends that loop, and the notice says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.widgets.statusbar import StatusBar
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui.app import CoderApp


async def reasoning_command(app: CoderApp, arg: str) -> None:
    from agent.llm.reasoning import LEVELS, parse_level

    transcript = app.query_one(Transcript)
    session = app.bridge.session
    if not arg:
        current = session.reasoning if session is not None else "off"
        transcript.notice(f"reasoning: {current}; /reasoning {' | '.join(LEVELS)} changes it", "info")
        return
    try:
        level = parse_level(arg)
    except ValueError as exc:
        transcript.notice(f"/reasoning: {exc}", "error")
        return
    if session is None:
        transcript.notice("the agent is not ready yet; try again in a moment", "warning")
        return
    session.reasoning = level
    app.query_one(StatusBar).set_reasoning(level)
    later = " from the next prompt" if app.bridge.running else ""
    transcript.notice(f"reasoning: {level}{later} (this session; set `reasoning` in the config file to keep it)",
                      "info")
    if not app.bridge.running:  # a stopped Claude tool loop goes on first: the session says so (once)
        session.note_reasoning_held()
