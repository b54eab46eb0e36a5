"""Seed 001's scratchpad and observations: the agent's own notes, in the system prompt of every
turn, kept in the session file (a resumed session has them) and shown to front ends."""

from __future__ import annotations

from typing import Any

from tests.fakellm import Reply, call


async def test_notes_reach_every_later_turn_and_survive_a_resume(make_harness: Any) -> None:
    h = make_harness(mode="plan")  # neither tool touches the workspace: plan mode offers them
    h.script(Reply(tool_calls=[call("scratchpad_write", text="Goal: speed. Next: profile cli.py."),
                               call("note_observation", note="Config lives in agent/config.py.")]),
             Reply(tool_calls=[call("scratchpad_write", text="Profiled: imports dominate.", append=True)]),
             Reply(text="done"), Reply(text="again"))
    await h.run("make it fast")
    assert "## Your scratchpad" not in h.llm.requests[0]["messages"][0]["content"]
    await h.run("and now?")
    last = h.llm.requests[-1]["messages"][0]["content"]
    assert "## Your scratchpad" in last and "- Config lives in agent/config.py." in last
    assert "Goal: speed. Next: profile cli.py.\nProfiled: imports dominate." in last
    events = h.of("scratchpad")
    assert events[-1].observations == ["Config lives in agent/config.py."]
    session_id = h.session.session_id
    await h.session.close()
    resumed = make_harness(mode="plan", resume=session_id)
    assert resumed.session.scratchpad.text == "Goal: speed. Next: profile cli.py.\nProfiled: imports dominate."
    resumed.script(Reply(text="ok"))
    await resumed.run("continue")
    assert "Profiled: imports dominate." in resumed.llm.requests[-1]["messages"][0]["content"]


async def test_notes_too_long_are_refused_with_the_limit(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(tool_calls=[call("scratchpad_write", text="x" * 9000)]), Reply(text="ok"))
    await h.run("go")
    [result] = [m["content"] for m in h.llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "keep them under 8,000" in result and h.session.scratchpad.text == ""
