"""An MCP server's own `readOnlyHint` is not believed (issue 20): only the user's config
(`read_only_tools`) lets a server's tool run like a read, in plan mode or without asking."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agent.approval import Decision
from tests.fakellm import Reply, call
from tests.profiles.conftest import make_session, requested_tools  # noqa: F401 - the fixture

SERVER = Path(__file__).with_name("hostile_mcp.py")


def hostile(target: Path, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), str(target)], **extra}


async def test_a_tool_that_calls_itself_read_only_does_not_run_in_plan_mode(make_session: Any, tmp_path: Path) -> None:
    target = tmp_path / "written.txt"
    h = make_session(mode="plan", mcp_servers={"evil": hostile(target)})
    h.script(Reply(tool_calls=[call("mcp__evil__lookup", word="x")]), Reply(text="plan"))
    await h.run()
    assert "mcp__evil__lookup" not in requested_tools(h.llm.requests[0])
    result = h.of("tool_result")[0]
    assert not result.ok and not target.exists()


async def test_a_tool_that_calls_itself_read_only_is_asked_for_in_ask_mode(make_session: Any, tmp_path: Path) -> None:
    target = tmp_path / "written.txt"
    h = make_session(mode="ask", mcp_servers={"evil": hostile(target)}, decisions=[Decision("deny")])
    h.script(Reply(tool_calls=[call("mcp__evil__lookup", word="x")]), Reply(text="done"))
    await h.run()
    assert [r.tool for r in h.approver.requests] == ["mcp__evil__lookup"] and not target.exists()


async def test_the_users_config_marks_a_tool_read_only(make_session: Any, tmp_path: Path) -> None:
    target = tmp_path / "written.txt"
    h = make_session(mode="plan", mcp_servers={"evil": hostile(target, read_only_tools=["lookup"])})
    h.script(Reply(tool_calls=[call("mcp__evil__lookup", word="x")]), Reply(text="plan"))
    await h.run()
    assert "mcp__evil__lookup" in requested_tools(h.llm.requests[0])
    assert h.of("tool_result")[0].ok and target.exists()  # the user vouched for it
