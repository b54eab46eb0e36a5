"""Which session needs you: `coder-tui sessions --live` lists the host's live sessions and their
subagents, a child waiting for an approval among them (the host in its own process, the model the
scripted server, the listing a `coder-tui` subprocess)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent.host.client import HostClient
from tests.conftest import cli
from tests.fakellm import FakeLLM, Reply, call
from tests.host.conftest import next_of, runtime_dir, start_host, ws  # noqa: F401 - fixtures
from tests.subagents.common import ByAsker


async def test_the_live_view_lists_a_waiting_child(fake_llm: FakeLLM, ws: Path, start_host) -> None:  # noqa: F811
    host = start_host()
    fake_llm.responder = ByAsker({
        "parent": [Reply(tool_calls=[call("agent", task="alpha make b.py")]), Reply(text="done")],
        "alpha": [Reply(tool_calls=[call("write_file", file_path="b.py", content="x = 1\n")]), Reply(text="made it")],
    })
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="tester", options=host.options(fake_llm, ws))
        await next_of(client, "replay_end")
        await client.request("prompt", text="delegate")
        asked = await next_of(client, "approval_required")
        assert asked["child_id"] and asked["parent_id"] == opened["session_id"]
        listed = subprocess.run(cli("sessions", "--live"), env=host.env, capture_output=True, text=True, timeout=60)
        await client.request("approve", approval_id=asked["approval_id"], decision="allow_once")
        done = await next_of(client, "turn_done")
    finally:
        await client.close()
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    parent = next(i for i, text in enumerate(lines) if opened["session_id"] in text)
    assert "waiting for you: 1 approval(s)" in lines[parent]
    child = lines[parent + 1]
    assert asked["child_id"] in child and "└" in child and "coder: alpha make b.py" in child
    assert "waiting for you: approval: write_file" in child
    assert done["success"] is True and (ws / "b.py").read_text() == "x = 1\n"
