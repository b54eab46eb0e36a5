"""`[tools.NAME]` (seed 003's per-tool configuration): a tool turned off is neither offered nor run,
a configured timeout applies when the model gives none, and a name that matches no tool is said."""

from __future__ import annotations

from typing import Any

from agent.events import WarningEvent
from tests.fakellm import Reply, call
from tests.profiles.conftest import requested_tools


async def test_tool_settings_turn_off_and_set_timeouts(make_session: Any) -> None:
    h = make_session(mode="allow", tools={"bash_exec": {"timeout": 1}, "web_fetch": {"enabled": False},
                                          "bash": {"timeout": 5}})
    h.script(Reply(tool_calls=[call("bash_exec", command="sleep 30")]),
             Reply(tool_calls=[call("web_fetch", url="https://example.com/")]),
             Reply(text="done"))
    await h.run("go")
    first = h.llm.requests[0]
    assert "bash_exec" in requested_tools(first) and "web_fetch" not in requested_tools(first)
    results = [m["content"] for m in h.llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "timed out after 1 s" in results[0]  # the config's timeout, not the default 60 s
    assert "turned off in the user's configuration" in results[1]
    warnings = [e.message for e in h.events if isinstance(e, WarningEvent)]
    assert any("[tools.bash] in the config names no tool" in w for w in warnings)


async def test_the_model_s_own_timeout_wins_over_the_configured_one(make_session: Any) -> None:
    h = make_session(mode="allow", tools={"bash_exec": {"timeout": 1}})
    h.script(Reply(tool_calls=[call("bash_exec", command="sleep 1.5; echo slept", timeout=20)]), Reply(text="done"))
    await h.run("go")
    [result] = [m["content"] for m in h.llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "slept" in result and "timed out" not in result
