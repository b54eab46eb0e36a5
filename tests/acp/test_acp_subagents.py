"""Subagents over ACP: the parent's `agent` tool call is updated with the child's start, progress
and end, each naming the child's and the parent's session ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_files
from tests.fakellm import FakeLLM, Reply, call
from tests.subagents.common import ByAsker


@pytest.mark.parametrize("fs", [False, True])  # the folder on disk; through the editor's buffers
async def test_the_agent_tool_call_carries_the_childs_ids_and_report(acp_client: Any, fake_llm: FakeLLM,
                                                                      tmp_path: Path, fs: bool) -> None:
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    fake_llm.responder = ByAsker({
        "parent": [Reply(tool_calls=[call("agent", task="alpha read a.py")]), Reply(text="It sets x.")],
        "alpha": [Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="x is 1")],
    })
    client = await acp_client("--mode", "allow")
    await client.initialize(fs=fs)
    sid = (await client.request("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]
    result = await client.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]})
    assert result["stopReason"] == "end_turn"
    [started] = [u for u in client.updates(sid, "tool_call") if u["rawInput"].get("task") == "alpha read a.py"]
    call_id = started["toolCallId"]
    updates = [u for u in client.updates(sid, "tool_call_update") if u["toolCallId"] == call_id]
    outputs = [u["rawOutput"] for u in updates if isinstance(u.get("rawOutput"), dict)]
    begun = next(o for o in outputs if o["type"] == "subagent_started")
    ended = next(o for o in outputs if o["type"] == "subagent_finished")
    assert begun["parent_id"] == ended["parent_id"] == sid and begun["child_id"] == ended["child_id"]
    assert ended["report"] == "x is 1" and ended["ok"] is True
    progress = [u for u in updates if u.get("content") and "read_file a.py" in str(u["content"])]
    assert progress and begun["child_id"] in str(progress[0]["content"])
    assert updates[-1]["status"] == "completed"
