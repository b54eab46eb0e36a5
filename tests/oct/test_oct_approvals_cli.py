"""`coder-tui room` in ask mode as users run it: proposals answered from the room chat or on stdin."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.paths import APP
from tests.fakellm import Reply, call
from tests.oct.test_oct_cli import DOC, model_args, read_until, start


def edit(value: str) -> Reply:
    return Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1, new_content=f"a = {value}")])


async def chat(node_host, *parts: str) -> str:
    while True:
        text = (await node_host.expect("chat", timeout=60))["text"]
        if all(part in text for part in parts):
            return text


async def finish(proc: asyncio.subprocess.Process) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except asyncio.TimeoutError:
        proc.kill()
        raise


async def test_the_chat_and_stdin_answer_proposals_in_turn(oct_server, node_host, fake_llm, isolated_home):
    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    node_host.send(cmd="open", path=DOC)
    fake_llm.script(edit("5"), edit("6"), Reply(text="a is six."))
    proc = await start(isolated_home, room, "--server", oct_server.url, "--mode", "ask", "--json",
                       "--approver", "host", *model_args(fake_llm))
    seen: list[dict[str, Any]] = []
    try:
        await read_until(proc, seen, "room_state", followed=DOC)
        node_host.send(cmd="type", path=DOC, at="end", text="# @agent six\n")
        await read_until(proc, seen, "approval_required")
        assert "+a = 5" in await chat(node_host, "Proposal 1")
        node_host.send(cmd="chat", text="@agent yes")  # the room answers the first...
        resolved = await read_until(proc, seen, "approval_resolved")
        assert (resolved["decision"], resolved["by"]) == ("allow_once", "host")
        await read_until(proc, seen, "approval_required")
        assert "+a = 6" in await chat(node_host, "Proposal 2")
        assert proc.stdin is not None
        proc.stdin.write(b"y\n")  # ...and the person running coder-tui the second
        await proc.stdin.drain()
        resolved = await read_until(proc, seen, "approval_resolved")
        assert (resolved["decision"], resolved["by"]) == ("allow_once", None)
        assert await chat(node_host, "Proposal 2 ") == "Proposal 2 approved by the person running coder-tui."
        await read_until(proc, seen, "complete")
        assert await node_host.wait_text(DOC, equals="a = 6\n# @agent six\n")
        assert not [e for e in seen if e["type"] == "error"]
    finally:
        await finish(proc)


async def test_config_approvers_and_a_closed_stdin(oct_server, node_host, fake_llm, isolated_home):
    """With stdin closed nobody can answer locally: the allowed peers of the config answer instead."""
    folder = isolated_home / "config" / APP
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text('[room]\napprovers = ["host"]\n')
    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    node_host.send(cmd="open", path=DOC)
    fake_llm.script(edit("5"), Reply(text="I will keep it."))
    proc = await start(isolated_home, room, "--server", oct_server.url, "--mode", "ask", "--json",
                       *model_args(fake_llm))
    assert proc.stdin is not None
    proc.stdin.close()
    seen: list[dict[str, Any]] = []
    try:
        await read_until(proc, seen, "room_state", followed=DOC)
        node_host.send(cmd="type", path=DOC, at="end", text="# @agent five\n")
        await chat(node_host, "Proposal 1")
        node_host.send(cmd="chat", text="@agent no keep a at 1")
        resolved = await read_until(proc, seen, "approval_resolved")
        assert (resolved["decision"], resolved["feedback"], resolved["by"]) == ("deny", "keep a at 1", "host")
        await read_until(proc, seen, "complete")
        assert "Their feedback: keep a at 1" in fake_llm.requests[1]["messages"][-1]["content"]
    finally:
        await finish(proc)
