"""ACP through the session handle, with the real @agentclientprotocol/sdk client (tests/interop):
a stop answers the editor's queued `session/prompt` (it hung before), and `session/load` of a
session live in the host replays it and takes `session/set_mode` for the shared session."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agent.host.client import HostClient
from tests.acp.conftest import acp_client, no_host  # noqa: F401 - fixtures
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import next_of


def prompt_params(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


async def test_a_stop_answers_the_editors_queued_prompt(fake_llm: FakeLLM, ws: Path, start_host,
                                                        acp_client: Any) -> None:  # noqa: F811
    host = start_host()
    hold = threading.Event()
    fake_llm.script(Reply(text="a long task", hold=hold))
    terminal = await HostClient.connect(host.socket)
    try:
        opened = await terminal.request("open", session="new", client="terminal", options=host.options(fake_llm, ws))
        sid = opened["session_id"]
        await terminal.request("prompt", text="a long task")
        await next_of(terminal, "step_started")
        editor = await acp_client("--workflow", "direct", runtime=host.socket.parent.parent)
        await editor.initialize()
        await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        asked = editor.request_nowait("session/prompt", prompt_params(sid, "queued behind the terminal's turn"))
        await next_of(terminal, "prompt_queued")
        stopped = await terminal.request("stop")
        answer = await editor.reply(asked, timeout=60)
    finally:
        hold.set()
        await terminal.close()
    assert len(stopped["dropped"]) == 1
    assert answer["ok"] and answer["result"]["stopReason"] == "cancelled", answer


async def test_set_mode_of_a_loaded_session_applies_in_the_host(fake_llm: FakeLLM, ws: Path, start_host,
                                                                acp_client: Any) -> None:  # noqa: F811
    host = start_host()
    fake_llm.script(Reply(text="Recorded."))
    terminal = await HostClient.connect(host.socket)
    try:
        opened = await terminal.request("open", session="new", client="terminal", options=host.options(fake_llm, ws))
        sid = opened["session_id"]
        await terminal.request("prompt", text="remember this")
        await next_of(terminal, "turn_done")
        editor = await acp_client("--workflow", "direct", runtime=host.socket.parent.parent)
        await editor.initialize()
        await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        await editor.request("session/set_mode", {"sessionId": sid, "modeId": "plan"})
        changed = await next_of(terminal, "mode_changed")
    finally:
        await terminal.close()
    assert changed["mode"] == "plan" and changed["by"].startswith("acp (pid")
