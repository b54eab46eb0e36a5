"""`coder-tui acp` as an editor sees it: the official TypeScript SDK as the client, the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import write_files
from tests.fakellm import FakeLLM, Reply, call


def text_of(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["content"]["type"] == "text")


async def open_session(client: Any, root: Path, fs: bool = True) -> str:
    await client.initialize(fs=fs)
    result = await client.request("session/new", {"cwd": str(root), "mcpServers": []})
    return str(result["sessionId"])


async def test_initialize_advertises_what_works(acp_client: Any) -> None:
    client = await acp_client()
    result = await client.initialize()
    caps = result["agentCapabilities"]
    assert result["protocolVersion"] == 1
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"]["embeddedContext"] is True
    assert caps["promptCapabilities"]["image"] is False
    assert result["agentInfo"]["name"] == "coder-tui"


async def test_new_session_advertises_modes_and_streams_a_prompt(acp_client: Any, fake_llm: FakeLLM,
                                                                tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"notes.md": "# Notes\n"})
    client = await acp_client("--mode", "ask")
    session = await client.initialize() and await client.request("session/new", {"cwd": str(root), "mcpServers": []})
    sid = session["sessionId"]
    assert session["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in session["modes"]["availableModes"]] == ["ask", "allow", "plan"]
    fake_llm.script(Reply(text="Hello from the scripted model, in several chunks.", chunk_size=8))
    prompt = [{"type": "text", "text": "Summarise this"},
              {"type": "resource", "resource": {"uri": f"file://{root}/spec.txt", "text": "THE-SPEC-TEXT",
                                                "mimeType": "text/plain"}},
              {"type": "resource_link", "uri": f"file://{root}/notes.md", "name": "notes.md"}]
    result = await client.request("session/prompt", {"sessionId": sid, "prompt": prompt})
    assert result["stopReason"] == "end_turn"
    chunks = client.updates(sid, "agent_message_chunk")
    assert len(chunks) > 3
    assert text_of(chunks) == "Hello from the scripted model, in several chunks."
    user = fake_llm.requests[-1]["messages"][-1]["content"]
    assert user.startswith("Summarise this\n@notes.md")
    assert '<file path="spec.txt">\nTHE-SPEC-TEXT\n</file>' in user
    assert '<file path="notes.md">\n# Notes\n\n</file>' in user


def permission(event: dict[str, Any]) -> bool:
    return event.get("event") == "permission"


async def test_ask_mode_edits_go_through_permission_and_the_editors_buffers(acp_client: Any, fake_llm: FakeLLM,
                                                                           tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    path = str(root / "a.py")
    client = await acp_client("--mode", "ask")
    sid = await open_session(client, root)
    client.send(cmd="buffers", files={path: "x = 1\ny = 2  # unsaved\n"})
    fake_llm.script(Reply(tool_calls=[call("read_file", file_path="a.py")]),
                    Reply(tool_calls=[call("patch_file", file_path="a.py",
                                           patches=[{"old_text": "y = 2  # unsaved", "new_text": "y = 3"}])]),
                    Reply(text="Changed y."))
    prompt = client.request_nowait("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "y=3"}]})
    asked = await client.wait_for(permission)
    tool_call = asked["params"]["toolCall"]
    assert tool_call["kind"] == "edit" and tool_call["title"] == "Edit a.py"
    assert tool_call["content"] == [{"type": "diff", "path": path, "oldText": "x = 1\ny = 2  # unsaved\n",
                                     "newText": "x = 1\ny = 3\n"}]
    assert {o["optionId"]: o["kind"] for o in asked["params"]["options"]} == {
        "allow_once": "allow_once", "allow_always": "allow_always", "reject": "reject_once"}
    client.send(cmd="answer", rid=asked["rid"], outcome={"outcome": "selected", "optionId": "allow_once"})
    assert (await client.reply(prompt))["result"]["stopReason"] == "end_turn"

    read_result = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "y = 2  # unsaved" in read_result  # the agent read the unsaved buffer, not the disk
    writes = [e for e in client.seen if e.get("event") == "fs_write"]
    assert writes == [{"event": "fs_write", "path": path, "content": "x = 1\ny = 3\n"}]
    assert (root / "a.py").read_text() == "x = 1\n"  # written to the editor's buffer, not behind its back
    starts = client.updates(sid, "tool_call")
    assert [(s["title"], s["kind"], s["locations"][0]["path"]) for s in starts] == [
        ("Read a.py", "read", path), ("Edit a.py", "edit", path)]
    done = [u for u in client.updates(sid, "tool_call_update") if u.get("status") == "completed"]
    assert done[-1]["toolCallId"] == starts[1]["toolCallId"]
    assert done[-1]["content"] == tool_call["content"]

    # The same edit again, rejected: nothing is written and the model is told.
    mark = len(client.seen)
    fake_llm.script(Reply(tool_calls=[call("patch_file", file_path="a.py",
                                           patches=[{"old_text": "y = 3", "new_text": "y = 4"}])]),
                    Reply(text="Left it."))
    prompt = client.request_nowait("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "y=4"}]})
    asked = await client.wait_for(permission, start=mark)
    client.send(cmd="answer", rid=asked["rid"], outcome={"outcome": "selected", "optionId": "reject"})
    assert (await client.reply(prompt))["result"]["stopReason"] == "end_turn"
    assert [e for e in client.seen[mark:] if e.get("event") == "fs_write"] == []
    failed = [u for u in client.updates(sid, "tool_call_update", start=mark) if u.get("status") == "failed"]
    assert len(failed) == 1 and "denied" in failed[0]["content"][0]["content"]["text"]
    denied = [m for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "The user denied this patch_file call" in denied


async def test_allow_always_stops_asking_for_that_tool(acp_client: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.txt": "one\n"})
    client = await acp_client("--mode", "ask")
    sid = await open_session(client, root, fs=False)
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="two\n")]),
                    Reply(tool_calls=[call("write_file", file_path="b.txt", content="three\n")]),
                    Reply(text="ok"))
    prompt = client.request_nowait("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]})
    asked = await client.wait_for(permission)
    client.send(cmd="answer", rid=asked["rid"], outcome={"outcome": "selected", "optionId": "allow_always"})
    assert (await client.reply(prompt))["result"]["stopReason"] == "end_turn"
    assert len([e for e in client.seen if permission(e)]) == 1
    # Without the editor's file system, writes go to the disk.
    assert (root / "a.txt").read_text() == "two\n" and (root / "b.txt").read_text() == "three\n"
    assert [e for e in client.seen if e.get("event", "").startswith("fs_")] == []


async def test_the_editors_mcp_servers_give_the_agent_their_tools(acp_client: Any, fake_llm: FakeLLM,
                                                                 tmp_path: Path) -> None:
    from tests.profiles.conftest import EVERYTHING

    root = write_files(tmp_path / "ws", {})
    client = await acp_client()
    await client.initialize()
    servers = [{"name": "everything", "command": "node", "args": [str(EVERYTHING), "stdio"], "env": []},
               {"type": "sse", "name": "legacy", "url": "http://127.0.0.1:9/sse", "headers": []}]
    sid = (await client.request("session/new", {"cwd": str(root), "mcpServers": servers}))["sessionId"]
    fake_llm.script(Reply(tool_calls=[call("mcp__everything__echo", message="hi there")]), Reply(text="echoed"))
    prompt = client.request_nowait("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "echo"}]})
    # An editor's server is not the user's config: its tools ask first, whatever the server claims.
    asked = await client.wait_for(permission)
    client.send(cmd="answer", rid=asked["rid"], outcome={"outcome": "selected", "optionId": "allow_once"})
    await client.reply(prompt)
    assert "mcp__everything__echo" in {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    start = client.updates(sid, "tool_call")[0]
    assert (start["title"], start["kind"]) == ("mcp__everything__echo", "other")
    done = client.updates(sid, "tool_call_update")[-1]
    assert done["status"] == "completed" and done["content"][0]["content"]["text"] == "Echo: hi there"
    assert "MCP server legacy ignored: only stdio and HTTP servers are supported" in text_of(
        client.updates(sid, "agent_message_chunk"))
