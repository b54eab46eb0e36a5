"""MCP servers as tool sources, through real stdio sessions with the official npm servers."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from agent.approval import Decision
from tests.fakellm import Reply, call
from tests.profiles.conftest import EVERYTHING, FILESYSTEM, requested_tools

pytestmark = pytest.mark.skipif(not (EVERYTHING.exists() and shutil.which("node")),
                                reason="needs node and `npm ci --prefix tests/interop`")


def everything(**extra: Any) -> dict[str, Any]:
    return {"command": "node", "args": [str(EVERYTHING), "stdio"], **extra}


async def wait_for(condition: Any, seconds: float = 30.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.02)


async def test_an_mcp_tool_is_called_and_its_result_reaches_the_model(make_session: Any) -> None:
    h = make_session(mode="ask", mcp_servers={"everything": everything(
        read_only_tools=["echo", "get-sum", "get-tiny-image"])})
    h.script(Reply(tool_calls=[call("mcp__everything__echo", message="hello from the model")]),
             Reply(tool_calls=[call("mcp__everything__get-sum", a=2, b=40)]),
             Reply(tool_calls=[call("mcp__everything__get-tiny-image")]),
             Reply(text="done"))
    complete = await h.run("use the server")
    assert complete.completion_reason == "answered"
    first = h.llm.requests[0]
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert {"mcp__everything__echo", "mcp__everything__get-sum", "read_file"} <= set(offered)
    assert offered["mcp__everything__echo"]["parameters"]["properties"]["message"]["type"] == "string"
    results = [m["content"] for m in h.llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "Echo: hello from the model"
    assert "42" in results[1]
    assert "[image (image/png, about" in results[2] and "not shown" in results[2]
    assert not h.approver.requests  # the user's config marks these read-only
    running = [e for e in h.of("mcp_server") if e.state == "running"]
    assert running[0].server == "everything" and "mcp__everything__echo" in running[0].tools


async def test_filesystem_server_reads_freely_and_asks_before_writing(make_session: Any, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("remember the milk\n")
    server = {"command": "node", "args": [str(FILESYSTEM), str(shared)], "read_only_tools": ["read_text_file"]}
    h = make_session(mode="ask", mcp_servers={"fs": server}, decisions=[Decision("deny", feedback="no writes")])
    h.script(Reply(tool_calls=[call("mcp__fs__read_text_file", path=str(shared / "notes.txt"))]),
             Reply(tool_calls=[call("mcp__fs__write_file", path=str(shared / "new.txt"), content="x")]),
             Reply(tool_calls=[call("mcp__fs__read_text_file", path="/etc/hostname")]),
             Reply(text="done"))
    await h.run()
    results = [m["content"] for m in h.llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "remember the milk\n"
    assert [r.tool for r in h.approver.requests] == ["mcp__fs__write_file"]
    assert h.approver.requests[0].kind == "network" and h.approver.requests[0].url == "mcp://fs/write_file"
    assert "denied" in results[1] and not (shared / "new.txt").exists()
    assert results[2].startswith("Error:") and "denied" in results[2].lower()  # the server's own error


async def test_a_server_that_exits_mid_session_withdraws_its_tools(make_session: Any, tmp_path: Path) -> None:
    pidfile = tmp_path / "server.pid"
    wrapper = {"command": "sh", "args": ["-c", f'echo $$ > "{pidfile}"; exec node "{EVERYTHING}" stdio']}
    h = make_session(mcp_servers={"everything": wrapper})
    h.script(Reply(text="first"))
    await h.run()
    assert "mcp__everything__echo" in requested_tools(h.llm.requests[0])
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    await wait_for(lambda: h.of("error"))
    h.script(Reply(tool_calls=[call("mcp__everything__echo", message="still there?")]), Reply(text="second"))
    complete = await h.run()
    assert complete.completion_reason == "answered"
    assert not any(n.startswith("mcp__") for n in requested_tools(h.llm.requests[1]))
    # The withdrawn call shows its arguments and its server, not {"_raw": ...} and "not available here".
    assert h.of("tool_call")[-1].args == {"message": "still there?"}
    assert "withdrawn (MCP server everything is not running: the server stopped" in h.of("tool_result")[-1].error
    errors = [e.message for e in h.of("error")]
    assert len(errors) == 1 and errors[0].startswith("MCP server everything: the server stopped")
    assert "its tools are withdrawn (mcp__everything__echo" in errors[0]
    assert [e.state for e in h.of("mcp_server")] == ["running", "failed"]


async def test_servers_that_cannot_start_are_reported_once_and_the_rest_work(make_session: Any) -> None:
    servers = {"missing": {"command": "no-such-mcp-server-xyz"},
               "silent": {"command": "sleep", "args": ["60"], "timeout": 1.5},
               "everything": everything(),
               "off": {"command": "no-such-either", "enabled": False}}
    h = make_session(mcp_servers=servers)
    h.script(Reply(text="one"), Reply(text="two"))
    await h.run()
    await h.run()
    messages = sorted(e.message for e in h.of("error"))
    assert len(messages) == 2
    assert messages[0].startswith("MCP server missing: cannot start it: No such file or directory")
    assert messages[1] == "MCP server silent: did not start within 1.5 s"
    assert all("mcp__everything__echo" in requested_tools(r) for r in h.llm.requests)


async def test_profiles_can_leave_mcp_tools_out(make_session: Any) -> None:
    h = make_session(profile="architect", mcp_servers={"everything": everything()})
    h.script(Reply(text="plan"))
    await h.run()
    assert not any(n.startswith("mcp__") for n in requested_tools(h.llm.requests[0]))


async def test_stdio_servers_get_their_env_but_not_our_secrets(make_session: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-should-never-leak-0123456789")
    h = make_session(mcp_servers={"everything": everything(env={"EVERYTHING_FLAG": "on"})})
    h.script(Reply(tool_calls=[call("mcp__everything__get-env")]), Reply(text="ok"))
    await h.run()
    shown = [m["content"] for m in h.llm.requests[-1]["messages"] if m["role"] == "tool"][0]
    assert '"EVERYTHING_FLAG": "on"' in shown and "OPENAI_API_KEY" not in shown and "PATH" in shown


@pytest.fixture
def http_everything() -> Any:
    """server-everything on its streamable HTTP transport, on a free loopback port."""
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(["node", str(EVERYTHING), "streamableHttp"], env={**os.environ, "PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:  # ends when the server exits; the server says when it listens
        if "listening on port" in line:
            break
    else:
        pytest.fail("server-everything did not start its HTTP transport")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


async def test_a_remote_server_over_streamable_http(make_session: Any, http_everything: str) -> None:
    server = {"url": http_everything, "headers": {"Authorization": "Bearer secret-token-0123456789"}}
    h = make_session(mcp_servers={"remote": server})
    h.script(Reply(tool_calls=[call("mcp__remote__echo", message="over http")]), Reply(text="ok"))
    await h.run()
    results = [m["content"] for m in h.llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert results == ["Echo: over http"]
    assert "secret-token-0123456789" not in h.session.writer.path.read_text()


async def test_plan_mode_offers_only_the_read_only_mcp_tools(make_session: Any) -> None:
    h = make_session(mode="plan", mcp_servers={"everything": everything(read_only_tools=["echo", "get-sum"])})
    h.script(Reply(text="plan"))
    await h.run()
    offered = requested_tools(h.llm.requests[0])
    assert {"mcp__everything__echo", "mcp__everything__get-sum"} <= offered
    assert "mcp__everything__gzip-file-as-resource" not in offered  # not read-only: asked, so not in plan
