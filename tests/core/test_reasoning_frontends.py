"""The done-when check of reasoning in the command-line front ends: with `--reasoning high` and the
strict Anthropic server returning signed thinking, a three-tool-call task completes in `run --json`
(and `run`'s text), `serve` and `acp`, with the reasoning shown in each (and replayed by a loaded
ACP session)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.acp.conftest import AcpClient
from tests.conftest import TEST_KEY, run_cli, write_files
from tests.core.test_reasoning import three_reads
from tests.fake_anthropic import FakeAnthropic
from tests.serve.test_serve_cli import ServeProcess

FILES = {"a.txt": "1\n", "b.txt": "2\n", "c.txt": "3\n"}
PROMPT = "what do a, b and c hold?"


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(*three_reads()) as server:
        yield server


def accepted_with_blocks(server: FakeAnthropic) -> None:
    """Every request was accepted, thinking was asked for, and each tool loop carried its thinking back."""
    assert server.rejected == [] and server.remaining == 0
    assert all(body["thinking"]["type"] == "enabled" for body in server.requests)
    final = [m for m in server.requests[-1]["messages"] if m["role"] == "assistant"]
    assert [m["content"][0]["type"] for m in final] == ["thinking", "redacted_thinking", "thinking"]


def test_run_json_carries_the_reasoning(isolated_home: Path, anthropic: FakeAnthropic, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", FILES)
    done = run_cli(isolated_home, "run", PROMPT, "--workspace", str(root), "--json", "--mode", "allow",
                   "--model", anthropic.model, "--api-base", anthropic.url, "--api-key", TEST_KEY,
                   "--reasoning", "high")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    thought = "".join(e["text"] for e in events if e["type"] == "reasoning_delta")
    assert "Step 1: I should read a.txt" in thought and "time to answer" in thought
    assert [e["tool"] for e in events if e["type"] == "tool_call"] == ["read_file"] * 3
    assert events[-1]["type"] == "complete" and events[-1]["success"] is True
    assert [e for e in events if e["type"] == "usage"][-1]["total_reasoning_tokens"] > 0
    accepted_with_blocks(anthropic)


def test_seed_shapes_carry_the_reasoning_as_each_steps_thought(isolated_home: Path, anthropic: FakeAnthropic,
                                                                tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", FILES)
    done = run_cli(isolated_home, "run", PROMPT, "--workspace", str(root), "--json-format", "seed", "--mode",
                   "allow", "--model", anthropic.model, "--api-base", anthropic.url, "--api-key", TEST_KEY,
                   "--reasoning", "high")
    assert done.returncode == 0, done.stderr
    steps = [e for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "agent_step"]
    assert "Step 1: I should read a.txt" in steps[0]["thought"] and steps[0]["tool_calls"]
    assert "time to answer" in steps[-1]["thought"] and steps[-1]["is_complete"]


def test_run_prints_the_reasoning_apart_from_the_answer(isolated_home: Path, anthropic: FakeAnthropic,
                                                        tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", FILES)
    done = run_cli(isolated_home, "run", PROMPT, "--workspace", str(root), "--mode", "allow",
                   "--model", anthropic.model, "--api-base", anthropic.url, "--api-key", TEST_KEY,
                   "--reasoning", "high")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("a, b and c hold 1, 2 and 3.")
    assert "I should read" not in done.stdout  # the reasoning is on stderr, the answer on stdout
    assert "Step 2: I should read b.txt" in done.stderr and "reasoning)" in done.stderr
    accepted_with_blocks(anthropic)


def test_a_bad_reasoning_level_is_a_usage_error(isolated_home: Path) -> None:
    done = run_cli(isolated_home, "run", "hi", "--reasoning", "max")
    assert done.returncode == 2
    assert "invalid choice: 'max'" in done.stderr and "Traceback" not in done.stderr


def test_serve_streams_the_reasoning(isolated_home: Path, anthropic: FakeAnthropic, tmp_path: Path) -> None:
    server = ServeProcess(isolated_home, write_files(tmp_path / "ws", FILES), anthropic,  # type: ignore[arg-type]
                          "--mode", "allow", "--reasoning", "high")
    try:
        token = server.banner[1].removeprefix("token: ").strip()
        with httpx.stream("POST", server.url + "/api/chat", headers={"Authorization": f"Bearer {token}"},
                          json={"messages": [{"role": "user", "content": PROMPT}]}, timeout=120) as response:
            events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    finally:
        assert server.stop() == 0
    thought = "".join(e["content"] for e in events if e.get("type") == "reasoning")
    assert "Step 3: I should read c.txt" in thought
    assert "a, b and c hold 1, 2 and 3." in "".join(e["content"] for e in events if set(e) == {"content"})
    assert {"type": "complete", "success": True, "completion_reason": "answered"} in events
    accepted_with_blocks(anthropic)


async def test_acp_sends_the_reasoning_as_thought_chunks(isolated_home: Path, anthropic: FakeAnthropic,
                                                         tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", FILES)
    client = await AcpClient(isolated_home, anthropic, "--mode", "allow", "--reasoning", "high").start()  # type: ignore[arg-type]
    try:
        await client.initialize(fs=False)
        sid = (await client.request("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]
        result = await client.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": PROMPT}]},
                                      timeout=120)
        thoughts = "".join(u["content"]["text"] for u in client.updates(sid, "agent_thought_chunk"))
    finally:
        await client.stop()
    assert result["stopReason"] == "end_turn"
    assert "Step 1: I should read a.txt" in thoughts and "time to answer" in thoughts
    accepted_with_blocks(anthropic)
    again = await AcpClient(isolated_home, anthropic, "--reasoning", "high").start()  # type: ignore[arg-type]
    try:
        await again.initialize(fs=False)
        await again.request("session/load", {"sessionId": sid, "cwd": str(root), "mcpServers": []})
        replayed = [u["content"]["text"] for u in again.updates(sid, "agent_thought_chunk")]
    finally:
        await again.stop()
    assert [t.split(":")[0] for t in replayed] == ["Step 1", "[redacted thinking]\n\nStep 2", "Step 3",
                                                   "All three read; time to answer."]


async def test_acp_loading_a_stopped_tool_loop_with_reasoning_on_says_when_it_starts(isolated_home: Path,
                                                                                      tmp_path: Path) -> None:
    """ACP's way to change the level: load the session with another `--reasoning`. A Claude tool loop
    the step limit left open without thinking goes on without it (the strict server would refuse
    thinking there), and the editor is told when the level starts."""
    from agent.llm.reasoning import held_note
    from tests.fakellm import Reply, call

    root = write_files(tmp_path / "ws", FILES)
    with FakeAnthropic(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="a holds 1.")) as server:
        first = await AcpClient(isolated_home, server, "--mode", "allow", "--max-steps", "1").start()  # type: ignore[arg-type]
        try:
            await first.initialize(fs=False)
            sid = (await first.request("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]
            stopped = await first.request("session/prompt", {"sessionId": sid, "prompt": [
                {"type": "text", "text": "read a"}]}, timeout=120)
        finally:
            await first.stop()
        again = await AcpClient(isolated_home, server, "--mode", "allow", "--reasoning", "high").start()  # type: ignore[arg-type]
        try:
            await again.initialize(fs=False)
            await again.request("session/load", {"sessionId": sid, "cwd": str(root), "mcpServers": []})
            start = len(again.seen)
            result = await again.request("session/prompt", {"sessionId": sid, "prompt": [
                {"type": "text", "text": "go on"}]}, timeout=120)
            said = "".join(u["content"]["text"] for u in again.updates(sid, "agent_message_chunk", start))
        finally:
            await again.stop()
    assert stopped["stopReason"] == "max_turn_requests"
    assert server.rejected == [] and result["stopReason"] == "end_turn"
    assert "thinking" not in server.requests[-1]
    assert f"⚠ {held_note(server.model, 'high')}" in said and "a holds 1." in said


def chat(server: ServeProcess, text: str, session_id: str | None = None) -> list[dict[str, Any]]:
    token = server.banner[1].removeprefix("token: ").strip()
    body: dict[str, Any] = {"messages": [{"role": "user", "content": text}], **({"session_id": session_id} if session_id else {})}
    with httpx.stream("POST", server.url + "/api/chat", headers={"Authorization": f"Bearer {token}"}, json=body,
                      timeout=120) as response:
        return [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]


def test_serve_continuing_a_stopped_tool_loop_with_reasoning_on_says_when_it_starts(isolated_home: Path,
                                                                                     tmp_path: Path) -> None:
    """serve's way to change the level: continue a recorded session from a server started with another
    `--reasoning`; the stream's warning says when the level starts, and the loop goes on accepted."""
    from agent.llm.reasoning import held_note
    from tests.fakellm import Reply, call

    root = write_files(tmp_path / "ws", FILES)
    with FakeAnthropic(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="a holds 1.")) as llm:
        first = ServeProcess(isolated_home, root, llm, "--mode", "allow", "--max-steps", "1")  # type: ignore[arg-type]
        try:
            stopped = chat(first, "read a")
        finally:
            assert first.stop() == 0
        session_id = next(e["session_id"] for e in stopped if "session_id" in e)
        again = ServeProcess(isolated_home, root, llm, "--mode", "allow", "--reasoning", "high")  # type: ignore[arg-type]
        try:
            events = chat(again, "go on", session_id)
        finally:
            assert again.stop() == 0
    assert llm.rejected == [] and "thinking" not in llm.requests[-1]
    assert {"type": "warning", "message": held_note(llm.model, "high")} in events
    assert {"type": "complete", "success": True, "completion_reason": "answered"} in events
