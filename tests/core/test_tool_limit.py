"""More tools than the provider takes (OpenAI: 128): never a failed request (agent/tools/toolsearch.py).

An MCP server with 131 tools beside the built-in ones, against the strict OpenAI server (which
refuses 129 tools as OpenAI does): every request carries at most 128, `tool_search` among them;
the session says so once; a search makes the tool it found callable from the next step, and the
call reaches the MCP server. Anthropic, whose API has no such limit, gets every tool.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from agent.approval import ScriptedApprover
from agent.config import Config, McpServerSettings
from agent.tools.toolsearch import ToolShelf
from tests.conftest import ROOT, TEST_KEY, Harness, open_harness
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import FakeLLM, Reply, call

MANY = McpServerSettings(command=sys.executable, args=[str(ROOT / "tests" / "mcp_many.py"), "130"])


def harness(server: Any, root: Path) -> Harness:
    config = Config(model=server.model, api_base=server.url, api_key=SecretStr(TEST_KEY), mode="allow",
                    timeout=20.0, max_retries=0, mcp_servers={"many": MANY})  # type: ignore[arg-type]
    return open_harness(server, root, {"a.txt": "1\n"}, config, ScriptedApprover([]))


def names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] if "function" in t else t["name"] for t in body.get("tools") or []]


async def test_past_openais_tool_limit_the_mcp_tools_are_found_through_tool_search(tmp_path: Path) -> None:
    with FakeLLM(Reply(tool_calls=[call("tool_search", query="weather forecast")]),
                 Reply(tool_calls=[call("mcp__many__weather_forecast", city="Lyon")]),
                 Reply(text="Sunny in Lyon."), Reply(text="Still sunny.")) as server:
        h = harness(server, tmp_path / "ws")
        try:
            done = await h.run("what is the weather in Lyon?")
            again = await h.run("and tomorrow?")
        finally:
            await h.session.close()
    assert (done.success, done.final_response, again.success, server.rejected) == (True, "Sunny in Lyon.", True, [])
    first, second = names(server.requests[0]), names(server.requests[1])
    assert len(first) == 128 and "tool_search" in first and "mcp__many__weather_forecast" not in first
    assert len(second) == 128 and "mcp__many__weather_forecast" in second  # found: offered from then on
    assert "read_file" in first and "bash_exec" in first and "mcp__many__svc_0" in first  # the built-in tools stay;
    assert "mcp__many__svc_100" in first and "mcp__many__svc_100" not in second  # MCP tools fill the rest
    results = h.of("tool_result")
    assert "mcp__many__weather_forecast: The weather forecast for a city." in (results[0].output or "")
    assert results[1].ok and 'weather_forecast {"city": "Lyon"}' in (results[1].output or "")
    notes = [e.message for e in h.of("warning") if "tool_search" in e.message]
    builtin = len([n for n in first if not n.startswith("mcp__")]) - 1
    assert notes == [f"{builtin + 131} tools are more than openai/fake-model takes at once (128): {131 - (127 - builtin)} "
                     "MCP tools are offered through tool_search, which finds them by name or description "
                     "(docs/tools.md: Many tools)"]  # said once, though the second turn's requests are over the limit too


async def test_anthropic_takes_every_tool(tmp_path: Path) -> None:
    with FakeAnthropic(Reply(text="hello")) as server:
        h = harness(server, tmp_path / "ws")
        try:
            assert (await h.run("hi")).success
        finally:
            await h.session.close()
    sent = names(server.requests[0])
    assert len(sent) > 150 and "tool_search" not in sent and "mcp__many__weather_forecast" in sent
    assert not [e for e in h.of("warning") if "tool_search" in e.message]


def test_the_shelf_keeps_the_built_in_tools_and_the_most_recently_found() -> None:
    from agent.tools.toolsearch import ToolSearch

    class Fake:
        def __init__(self, name: str, server: str | None) -> None:
            self.name, self.description, self.mcp_server = name, f"does {name}", server

    shelf = ToolShelf()
    search = ToolSearch(shelf)
    tools: list[Any] = [Fake("read_file", None), Fake("bash_exec", None), *(Fake(f"m{k}", "s") for k in range(6))]
    assert shelf.fit(tools, 8, search) == tools and not shelf.active  # all fit: no search tool
    assert [t.name for t in shelf.fit(tools, 5, search)] == ["read_file", "bash_exec", "tool_search", "m0", "m1"]
    assert [t.name for t in shelf.waiting] == ["m2", "m3", "m4", "m5"]
    assert [t.name for t in shelf.search("m4")] == ["m4"] and [t.name for t in shelf.search("m5")] == ["m5"]
    assert [t.name for t in shelf.fit(tools, 5, search)] == ["read_file", "bash_exec", "tool_search", "m4", "m5"]
    assert [t.name for t in shelf.fit(tools, 4, search)] == ["read_file", "bash_exec", "tool_search", "m5"]
    assert [t.name for t in shelf.fit(tools, 6, search)] == ["read_file", "bash_exec", "tool_search", "m0", "m4",
                                                             "m5"]
