"""`coder-tui acp` in the session host: `session/list` shows the live sessions first, `session/load`
joins one, `session/cancel` stops the host's run, a closed editor leaves the run going; without a
usable host, `session/load` works in-process and says so once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agent.host.client import HostClient
from tests.acp.conftest import acp_client, no_host  # noqa: F401 - fixtures
from tests.acp.test_acp import open_session, text_of
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import next_of


def prompt_params(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


async def test_cancel_stops_the_hosts_run_and_a_closed_editor_leaves_the_run_going(
        fake_llm: FakeLLM, ws: Path, start_host, acp_client: Any) -> None:
    host = start_host()
    runtime = host.socket.parent.parent
    first, second = threading.Event(), threading.Event()
    fake_llm.script(Reply(text="Recorded."), Reply(text="never finished", hold=first),
                    Reply(text="Finished without the editor.", hold=second))
    watcher = await HostClient.connect(host.socket)
    try:
        opened = await watcher.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        sid = opened["session_id"]
        await watcher.request("prompt", text="remember this")
        await next_of(watcher, "turn_done")
        editor = await acp_client("--workflow", "direct", runtime=runtime)
        await editor.initialize()
        listed = (await editor.request("session/list", {"cwd": str(ws)}))["sessions"]
        assert listed[0]["sessionId"] == sid
        assert listed[0]["_meta"]["coder-tui"] == {"live": True, "running": False, "attached": ["watcher"]}
        await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        await next_of(watcher, "client_joined")
        # session/cancel stops the run in the host: the editor's turn ends as cancelled, for everyone
        asked = editor.request_nowait("session/prompt", prompt_params(sid, "a long task"))
        await next_of(watcher, "step_started")
        await fake_llm.until_asked(2)  # cancelled mid-request (before it, the next turn would take its held reply)
        editor.send(cmd="notify", method="session/cancel", params={"sessionId": sid})
        done = await next_of(watcher, "turn_done")
        assert done["completion_reason"] == "stopped" and done["by"].startswith("acp (pid")
        assert (await editor.reply(asked))["result"]["stopReason"] == "cancelled"
        # the editor leaves mid-turn: the run goes on in the host
        editor.request_nowait("session/prompt", prompt_params(sid, "another long task"))
        await next_of(watcher, "step_started")
        await fake_llm.until_asked(3)
        await editor.stop()
        await next_of(watcher, "client_left")
        second.set()
        seen: list[dict[str, Any]] = []
        done = await next_of(watcher, "turn_done", seen=seen)
        assert done["success"] is True and done["by"].startswith("acp (pid")
        assert [e["final_response"] for e in seen if e["type"] == "complete"] == ["Finished without the editor."]
    finally:
        first.set()
        second.set()
        await watcher.close()


async def test_without_a_usable_host_load_runs_in_process_and_says_so_once(
        fake_llm: FakeLLM, tmp_path: Path, acp_client: Any) -> None:
    root = tmp_path / "project"
    root.mkdir()
    recorder = await acp_client()
    ids = [await open_session(recorder, root, fs=False)]
    ids.append(str((await recorder.request("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]))
    fake_llm.script(Reply(text="One."), Reply(text="Two."), Reply(text="Three."), Reply(text="Four."))
    for sid in ids:
        await recorder.request("session/prompt", prompt_params(sid, "hello"))
    await recorder.stop()

    editor = await acp_client()  # its runtime folder is unusable: no host can start
    await editor.initialize(fs=False)
    for sid in ids:
        await editor.request("session/load", {"sessionId": sid, "cwd": str(root), "mcpServers": []})
        assert (await editor.request("session/prompt", prompt_params(sid, "again")))["stopReason"] == "end_turn"
    said = [text_of(editor.updates(sid, "agent_message_chunk")) for sid in ids]
    assert "the session host is not available" in said[0] and "runs in this process only" in said[0]
    assert "the session host is not available" not in said[1]
    assert said[0].endswith("Three.") and said[1].endswith("Four.")
    assert editor.stderr().count("the session host is not available") == 1


async def test_an_approval_waiting_when_the_editor_joins_is_asked_there_and_answered_for_all(
        fake_llm: FakeLLM, ws: Path, start_host, acp_client: Any) -> None:
    from tests.host.test_host_fanout import EDIT

    host = start_host()
    fake_llm.script(EDIT, Reply(text="Done."))
    watcher = await HostClient.connect(host.socket)
    try:
        opened = await watcher.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        sid = opened["session_id"]
        await watcher.request("prompt", text="make f return 2")
        asked = await next_of(watcher, "approval_required")
        editor = await acp_client("--workflow", "direct", runtime=host.socket.parent.parent)
        await editor.initialize()
        await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        # the session so far (the watcher's prompt, the tool call), then the approval as a permission request
        kinds = [(u["sessionUpdate"], u.get("title") or u.get("content", {}).get("text")) for u in editor.updates(sid)]
        assert kinds[:2] == [("user_message_chunk", "make f return 2"), ("tool_call", "Edit a.py")]
        request = await editor.wait_for(lambda e: e.get("event") == "permission")
        assert request["params"]["toolCall"]["toolCallId"] == asked["call_id"]
        editor.send(cmd="answer", rid=request["rid"], outcome={"outcome": "selected", "optionId": "reject"})
        answered = await next_of(watcher, "approval_answered", approval_id=asked["approval_id"])
        assert answered["decision"] == "deny" and answered["by"].startswith("acp (pid")
        await next_of(watcher, "turn_done")
        titled = await editor.wait_for(lambda e: e.get("event") == "update"
                                       and "rejected by acp" in str(e["update"].get("title")))
        assert titled["update"]["toolCallId"] == asked["call_id"]
    finally:
        await watcher.close()
    assert (ws / "a.py").read_text().endswith("return 1\n")


async def test_a_host_killed_under_the_editor_is_reported_and_load_joins_again(
        fake_llm: FakeLLM, ws: Path, start_host, acp_client: Any) -> None:
    host = start_host()
    fake_llm.script(Reply(text="Recorded."), Reply(text="After the restart."))
    watcher = await HostClient.connect(host.socket)
    try:
        opened = await watcher.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        sid = opened["session_id"]
        await watcher.request("prompt", text="remember this")
        await next_of(watcher, "turn_done")
        editor = await acp_client("--workflow", "direct", runtime=host.socket.parent.parent)
        await editor.initialize()
        await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        host.process.kill()
        await editor.wait_for(lambda e: e.get("event") == "update" and "the session host stopped" in str(e["update"]))
    finally:
        await watcher.close()
    start = len(editor.seen)
    await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
    again = text_of(editor.updates(sid, "agent_message_chunk", start=start))
    assert "Recorded." in again and "started the session host" in again  # on demand, from the record
    assert (await editor.request("session/prompt", prompt_params(sid, "still there?")))["stopReason"] == "end_turn"
    assert text_of(editor.updates(sid, "agent_message_chunk")).endswith("After the restart.")
