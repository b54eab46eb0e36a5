"""`coder-tui acp` sessions over time: cancel, modes, plans, and loading a recorded session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.acp.test_acp import open_session, permission, text_of
from tests.conftest import TEST_KEY, run_cli, write_files
from tests.fakellm import FakeLLM, Reply, call
from tests.planning.common import plan_reply


def prompt_params(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


async def test_cancel_mid_stream_ends_the_turn_as_cancelled(acp_client: Any, fake_llm: FakeLLM,
                                                            tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client()
    sid = await open_session(client, root)
    # The model sends three chunks, then nothing more (the connection stays open): only a cancel ends it.
    fake_llm.script(Reply(text="Starting a long answer that never ends", chunk_size=5, stall_after=4),
                    Reply(text="Still here."))
    prompt = client.request_nowait("session/prompt", prompt_params(sid, "go on"))
    await client.wait_for(lambda e: e.get("event") == "update"
                          and e["update"]["sessionUpdate"] == "agent_message_chunk")
    client.send(cmd="notify", method="session/cancel", params={"sessionId": sid})
    assert (await client.reply(prompt, timeout=30))["result"]["stopReason"] == "cancelled"
    # The session goes on: the next prompt runs.
    result = await client.request("session/prompt", prompt_params(sid, "again"))
    assert result["stopReason"] == "end_turn"
    assert text_of(client.updates(sid, "agent_message_chunk")).endswith("Still here.")


async def test_cancel_while_a_permission_is_asked_stops_the_run(acp_client: Any, fake_llm: FakeLLM,
                                                               tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client("--mode", "ask")
    sid = await open_session(client, root, fs=False)
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="new.txt", content="x\n")]))
    prompt = client.request_nowait("session/prompt", prompt_params(sid, "write"))
    await client.wait_for(permission)
    client.send(cmd="notify", method="session/cancel", params={"sessionId": sid})
    assert (await client.reply(prompt, timeout=30))["result"]["stopReason"] == "cancelled"
    assert not (root / "new.txt").exists()


async def test_a_cancelled_permission_outcome_stops_the_run(acp_client: Any, fake_llm: FakeLLM,
                                                            tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client("--mode", "ask")
    sid = await open_session(client, root, fs=False)
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="touch made-it")]))
    prompt = client.request_nowait("session/prompt", prompt_params(sid, "run it"))
    asked = await client.wait_for(permission)
    assert asked["params"]["toolCall"]["kind"] == "execute"
    assert asked["params"]["toolCall"]["content"][0]["content"]["text"] == "```sh\ntouch made-it\n```"
    client.send(cmd="answer", rid=asked["rid"], outcome={"outcome": "cancelled"})
    assert (await client.reply(prompt, timeout=30))["result"]["stopReason"] == "cancelled"
    assert not (root / "made-it").exists()


async def test_set_mode_changes_what_needs_approval(acp_client: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client("--mode", "ask")
    sid = await open_session(client, root, fs=False)
    await client.request("session/set_mode", {"sessionId": sid, "modeId": "allow"})
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="a\n")]), Reply(text="done"))
    assert (await client.request("session/prompt", prompt_params(sid, "write a")))["stopReason"] == "end_turn"
    assert (root / "a.txt").read_text() == "a\n"
    assert not [e for e in client.seen if permission(e)]

    await client.request("session/set_mode", {"sessionId": sid, "modeId": "plan"})
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="b.txt", content="b\n")]), Reply(text="can't"))
    assert (await client.request("session/prompt", prompt_params(sid, "write b")))["stopReason"] == "end_turn"
    assert not (root / "b.txt").exists()
    failed = [u for u in client.updates(sid, "tool_call_update") if u.get("status") == "failed"]
    assert "blocked in plan mode" in failed[-1]["content"][0]["content"]["text"]

    reply = await client.reply(client.request_nowait("session/set_mode", {"sessionId": sid, "modeId": "yolo"}))
    assert not reply["ok"] and "plan, ask and allow" in str(reply["error"]["data"])


async def test_todo_list_becomes_plan_entries(acp_client: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client()
    sid = await open_session(client, root)
    todos = [{"id": "1", "content": "Read the code", "status": "completed"},
             {"id": "2", "content": "Write the test", "status": "in_progress"},
             {"id": "3", "content": "Fix it", "status": "pending"}]
    fake_llm.script(Reply(tool_calls=[call("todo_write", todos=todos)]), Reply(text="planned"))
    await client.request("session/prompt", prompt_params(sid, "plan it"))
    plans = client.updates(sid, "plan")
    assert plans[-1]["entries"] == [
        {"content": "Read the code", "priority": "medium", "status": "completed"},
        {"content": "Write the test", "priority": "medium", "status": "in_progress"},
        {"content": "Fix it", "priority": "medium", "status": "pending"}]
    assert client.updates(sid, "tool_call")[0]["kind"] == "think"


async def test_structured_plan_is_reviewed_by_permission_and_reported_as_plan_entries(
        acp_client: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client("--mode", "ask", "--workflow", "structured")
    sid = await open_session(client, root)
    fake_llm.script(plan_reply("Make a", "Make b", goal="Two files"), Reply(text="a made"), Reply(text="b made"),
                    Reply(text="Report text."))
    prompt = client.request_nowait("session/prompt", prompt_params(sid, "build it in steps"))
    asked = await client.wait_for(permission)
    assert "Make a" in asked["params"]["toolCall"]["title"]
    assert [o["optionId"] for o in asked["params"]["options"]] == ["approve", "stop"]
    client.send(cmd="answer", rid=asked["rid"], outcome={"outcome": "selected", "optionId": "approve"})
    assert (await client.reply(prompt))["result"]["stopReason"] == "end_turn"
    story = [[(e["content"], e["status"]) for e in plan["entries"]] for plan in client.updates(sid, "plan")]
    assert story[0] == [("Make a", "pending"), ("Make b", "pending")]
    assert [("Make a", "in_progress"), ("Make b", "pending")] in story
    assert [("Make a", "completed"), ("Make b", "in_progress")] in story
    assert story[-1] == [("Make a", "completed"), ("Make b", "completed")]
    assert text_of(client.updates(sid, "agent_message_chunk")).endswith("Report text.")


async def test_load_replays_a_recorded_session_and_continues_it(acp_client: Any, fake_llm: FakeLLM,
                                                               tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.py": "print('hi')\n"})
    first = await acp_client("--mode", "allow")
    sid = await open_session(first, root)
    todo = call("todo_write", todos=[{"id": "1", "content": "Say bye", "status": "pending"}])
    fake_llm.script(Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="It prints hi."),
                    Reply(tool_calls=[todo, call("write_file", file_path="b.py", content="print('bye')\n")]),
                    Reply(text="Planned."))
    await first.request("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": "What does it print?"},
        {"type": "resource_link", "uri": f"file://{root}/a.py", "name": "a.py"}]})
    await first.request("session/prompt", prompt_params(sid, "plan a change"))
    await first.stop()

    second = await acp_client()
    assert (await second.initialize())["agentCapabilities"]["sessionCapabilities"] == {"list": {}}
    listed = await second.request("session/list", {"cwd": str(root)})
    assert [(s["sessionId"], s["cwd"], s["title"]) for s in listed["sessions"]] == [
        (sid, str(root), "What does it print?")]
    assert (await second.request("session/list", {"cwd": str(tmp_path)}))["sessions"] == []
    loaded = await second.request("session/load", {"sessionId": sid, "cwd": str(root), "mcpServers": []})
    assert loaded["modes"]["currentModeId"] == "ask"  # this process's mode (the flag's, or the config's)
    replay = second.updates(sid)  # all of them came before the reply
    kinds = [u["sessionUpdate"] for u in replay]
    assert kinds == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk",
                     "user_message_chunk", "tool_call", "tool_call", "tool_call_update", "tool_call_update",
                     "agent_message_chunk", "plan"]
    assert replay[0]["content"]["text"] == "What does it print?\n@a.py"  # typed text, not the attached file
    assert (replay[1]["title"], replay[1]["kind"]) == ("Read a.py", "read")
    assert replay[3]["content"]["text"] == "It prints hi."
    assert (replay[6]["title"], replay[6]["kind"]) == ("Edit b.py", "edit")
    assert replay[8]["content"][0]["content"]["text"].startswith("```diff\n--- /dev/null\n+++ b/b.py\n")
    assert replay[-1]["entries"] == [{"content": "Say bye", "priority": "medium", "status": "pending"}]

    fake_llm.script(Reply(text="Continued."))
    assert (await second.request("session/prompt", prompt_params(sid, "and now?")))["stopReason"] == "end_turn"
    sent = fake_llm.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][-1] == "and now?"
    assert any(m["role"] == "assistant" and m.get("content") == "It prints hi." for m in sent)


async def test_unknown_session_and_bad_cwd_are_clear_errors(acp_client: Any, tmp_path: Path) -> None:
    client = await acp_client()
    await client.initialize()
    reply = await client.reply(client.request_nowait("session/new", {"cwd": "relative/dir", "mcpServers": []}))
    assert not reply["ok"] and "absolute" in str(reply["error"]["data"])
    missing = str(tmp_path / "gone")
    reply = await client.reply(client.request_nowait("session/new", {"cwd": missing, "mcpServers": []}))
    assert not reply["ok"] and reply["error"]["data"]["message"] == f"workspace folder {missing} does not exist"
    reply = await client.reply(client.request_nowait("session/load", {"sessionId": "nope", "cwd": str(tmp_path),
                                                                       "mcpServers": []}))
    assert not reply["ok"] and "no session 'nope'" in str(reply["error"]["data"])
    reply = await client.reply(client.request_nowait("session/prompt", prompt_params("nope", "hi")))
    assert not reply["ok"] and "no such session" in str(reply["error"]["data"])


async def test_a_model_litellm_cannot_route_fails_the_prompt_with_the_reason(acp_client: Any, isolated_home: Path,
                                                                           tmp_path: Path) -> None:
    client = await acp_client("--model", "nosuchprovider/some-model")
    sid = await open_session(client, write_files(tmp_path / "ws", {}))
    reply = await client.reply(client.request_nowait("session/prompt", prompt_params(sid, "hi")))
    assert not reply["ok"]
    assert "nosuchprovider" in reply["error"]["message"]


async def test_a_session_recorded_over_acp_continues_in_coder_tui_run(acp_client: Any, fake_llm: FakeLLM,
                                                                     isolated_home: Path, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client()
    sid = await open_session(client, root)
    fake_llm.script(Reply(text="Noted: the colour is teal."))
    await client.request("session/prompt", prompt_params(sid, "Remember: the colour is teal."))
    await client.stop()
    fake_llm.script(Reply(text="Teal."))
    done = await asyncio.to_thread(run_cli, isolated_home, "run", "--resume", sid, "Which colour?", "--json",
                                   "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    assert done.returncode == 0, done.stderr
    sent = fake_llm.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["Remember: the colour is teal.", "Which colour?"]


async def test_every_error_carries_its_reason_in_data_details(acp_client: Any, fake_llm: FakeLLM,
                                                              tmp_path: Path) -> None:
    # Toad shows "Failed to initialize agent — {error.data.details}"; nothing after the dash before.
    root = write_files(tmp_path / "ws", {})
    client = await acp_client("--api-base", "127.0.0.1:9")  # refused by the configuration, at session/new
    await client.initialize()
    reply = await client.reply(client.request_nowait("session/new", {"cwd": str(root), "mcpServers": []}))
    assert not reply["ok"] and "'127.0.0.1:9' is not an http(s) address" in reply["error"]["data"]["details"]
    reply = await client.reply(client.request_nowait("session/new", {"cwd": "relative/dir", "mcpServers": []}))
    assert "cwd must be an absolute path" in reply["error"]["data"]["details"]
    reply = await client.reply(client.request_nowait("session/prompt", {"sessionId": "nope"}))  # the SDK's own error
    assert not reply["ok"] and "prompt" in reply["error"]["data"]["details"]


async def test_a_failed_prompt_carries_its_reason_in_data_details(acp_client: Any, tmp_path: Path) -> None:
    client = await acp_client("--model", "nosuchprovider/some-model")
    sid = await open_session(client, write_files(tmp_path / "ws", {}))
    reply = await client.reply(client.request_nowait("session/prompt", prompt_params(sid, "hi")))
    assert not reply["ok"] and "nosuchprovider" in reply["error"]["data"]["details"]


async def test_a_new_file_is_a_diff_with_a_null_old_text(acp_client: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {})
    client = await acp_client("--mode", "ask")
    sid = await open_session(client, root)
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="new.py", content="print('hi')\n")]),
                    Reply(text="Created it."))
    prompt = client.request_nowait("session/prompt", prompt_params(sid, "make new.py"))
    asked = await client.wait_for(lambda e: e.get("event") == "permission")
    expected = [{"type": "diff", "path": str(root / "new.py"), "oldText": None, "newText": "print('hi')\n"}]
    assert asked["params"]["toolCall"]["content"] == expected
    client.send(cmd="answer", rid=asked["rid"], outcome={"outcome": "selected", "optionId": "allow_once"})
    assert (await client.reply(prompt))["result"]["stopReason"] == "end_turn"
    done = [u for u in client.updates(sid, "tool_call_update") if u.get("status") == "completed"]
    assert done[-1]["content"] == expected


async def test_text_of_successive_turns_is_set_apart(acp_client: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    client = await acp_client("--mode", "allow")
    sid = await open_session(client, root)
    fake_llm.script(Reply(text="I'll bump it for readability:",
                          tool_calls=[call("replace_lines", file_path="a.py", start_line=1, end_line=1,
                                           new_content="x = 2")]),
                    Reply(text="The function now returns 2."))
    await client.request("session/prompt", prompt_params(sid, "bump x"))
    mark = len(client.seen)
    assert text_of(client.updates(sid, "agent_message_chunk")) == (
        "I'll bump it for readability:\n\nThe function now returns 2.")
    fake_llm.script(Reply(text="Second prompt."))  # a new prompt is a new message: nothing before it
    await client.request("session/prompt", prompt_params(sid, "again"))
    assert text_of(client.updates(sid, "agent_message_chunk", start=mark)) == "Second prompt."


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] not in "ZX"
    except (FileNotFoundError, IndexError):
        return False


def _agent_pid(client: Any) -> int:
    """The `coder-tui acp` process the Node client started (its only child)."""
    node = client.proc.pid
    children = Path(f"/proc/{node}/task/{node}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


async def test_sigterm_stops_the_run_records_it_and_exits_0(acp_client: Any, fake_llm: FakeLLM, isolated_home: Path,
                                                           tmp_path: Path) -> None:
    import os
    import signal

    client = await acp_client()
    sid = await open_session(client, write_files(tmp_path / "ws", {}))
    fake_llm.script(Reply(text="slow " * 2000, chunk_size=5, chunk_delay=0.01))
    client.request_nowait("session/prompt", prompt_params(sid, "talk"))
    await client.wait_for(lambda e: e.get("event") == "update")
    pid = _agent_pid(client)
    os.kill(pid, signal.SIGTERM)  # it ended at once (143), the run unrecorded
    deadline = asyncio.get_running_loop().time() + 30
    while _alive(pid):  # not our child (Node's): watched through /proc
        assert asyncio.get_running_loop().time() < deadline, "the agent did not exit on SIGTERM"
        await asyncio.sleep(0.05)
    session_file = next((isolated_home / "data" / "coder-tui" / "sessions").glob("*.jsonl"))
    assert '"completion_reason": "stopped"' in session_file.read_text()


async def test_load_skips_and_says_a_recorded_event_it_cannot_read(acp_client: Any, fake_llm: FakeLLM,
                                                                   tmp_path: Path, isolated_home: Path) -> None:
    import json

    root = write_files(tmp_path / "ws", {"a.py": "print('hi')\n"})
    first = await acp_client("--mode", "allow")
    sid = await open_session(first, root)
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="exit 3")]), Reply(text="It failed."))
    await first.request("session/prompt", prompt_params(sid, "run it"))
    await first.stop()
    session_file = next((isolated_home / "data" / "coder-tui" / "sessions").glob(f"*{sid}*.jsonl"))
    with session_file.open("a") as out:  # one from a later version, one damaged: neither parses
        for raw in ({"type": "telepathy"}, {"type": "tool_result", "call_id": "x", "ok": {"x": 1}}):
            out.write(json.dumps({"t": 1.0, "kind": "event", "data": raw}) + "\n")

    second = await acp_client()
    await second.initialize()
    await second.request("session/load", {"sessionId": sid, "cwd": str(root), "mcpServers": []})
    replay = second.updates(sid)
    assert [u["status"] for u in replay if u["sessionUpdate"] == "tool_call_update"] == ["completed"]  # as before
    assert "2 recorded events of an unknown or damaged shape were skipped" in text_of(
        [u for u in replay if u["sessionUpdate"] == "agent_message_chunk"])
