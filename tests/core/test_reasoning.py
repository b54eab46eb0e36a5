"""Reasoning end to end through litellm's real adapters: the effort asked for, the reasoning
streamed as `reasoning_delta`, Anthropic's signed thinking blocks kept in the history and sent
back (the strict server of tests/fake_anthropic.py refuses a tool-use turn without them), the
blocks dropped for another provider, the reasoning recorded and resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agent.approval import ScriptedApprover
from agent.config import Config
from agent.llm import LLM, LLMError
from tests.conftest import Harness, open_harness
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import FakeLLM, Reply, call

KEY = "sk-ant-test-reasoning-0001"
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "read a file", "parameters": {
    "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}}}]


def three_reads() -> list[Reply]:
    """A task of three tool calls, each step thought through first, then the answer."""
    steps = [Reply(reasoning=f"Step {n}: I should read {name} to see what it holds.", chunk_size=9,
                   redacted_thinking=n == 2, tool_calls=[call("read_file", file_path=name)])
             for n, name in enumerate(("a.txt", "b.txt", "c.txt"), 1)]
    return [*steps, Reply(reasoning="All three read; time to answer.", text="a, b and c hold 1, 2 and 3.")]


def harness(server: Any, root: Path, reasoning: str = "high", resume: str | None = None, **extra: Any) -> Harness:
    files = extra.pop("files", None) or {"a.txt": "1\n", "b.txt": "2\n", "c.txt": "3\n"}
    config = Config(model=extra.pop("model", server.model), api_base=server.url, api_key=SecretStr(KEY), mode="allow",
                    timeout=20.0, max_retries=0, retry_base_delay=0.01, reasoning=reasoning, **extra)  # type: ignore[arg-type]
    return open_harness(server, root, files, config, ScriptedApprover([]), resume)


def final_assistant(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"][-1]["content"]


async def test_a_three_tool_task_with_high_reasoning_passes_the_strict_anthropic_server(tmp_path: Path) -> None:
    with FakeAnthropic(*three_reads()) as server:
        h = harness(server, tmp_path / "ws")
        try:
            done = await h.run("what do a, b and c hold?")
        finally:
            await h.session.close()
    assert (done.success, server.rejected) == (True, [])
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert server.requests[0]["max_tokens"] > 4096
    thought = "".join(e.text for e in h.of("reasoning_delta"))
    assert "Step 1: I should read a.txt" in thought and "time to answer" in thought
    # each tool-use turn went back starting with its own thinking block, signature unchanged
    for request, kinds in zip(server.requests[1:], (["thinking"], ["redacted_thinking", "thinking"], ["thinking"])):
        sent = final_assistant(request)
        assert [b["type"] for b in sent][: len(kinds) + 1] == [*kinds, "tool_use"]
        assert all(server.signer.valid(b) for b in sent if b["type"] in kinds)
    usage = h.of("usage")[-1]
    assert 0 < usage.total_reasoning_tokens <= usage.total_completion_tokens


async def test_without_its_thinking_block_a_tool_loop_goes_on_without_thinking(tmp_path: Path) -> None:
    """What the kept blocks are for (opencode and others shipped the API's 400 here): a tool loop
    whose last turn lost its block goes on with thinking off; a changed block is refused."""
    with FakeAnthropic(three_reads()[0], Reply(text="a holds 1.")) as server:
        model = LLM(server.model, server.url, KEY, max_retries=0, reasoning="high")
        reply = await model.complete([{"role": "user", "content": "read a"}], TOOLS, lambda t: None, lambda *a: None)
        bare = {"role": "assistant", "content": None, "tool_calls": [
            {"id": reply.tool_calls[0].id, "type": "function",
             "function": {"name": "read_file", "arguments": reply.tool_calls[0].arguments}}]}
        history = [{"role": "user", "content": "read a"}, bare,
                   {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "1"}]
        tampered = [history[0], {**bare, "thinking_blocks": [{**reply.thinking.blocks()[0], "thinking": "edited"}]},
                    history[2]]
        with pytest.raises(LLMError, match="blocks in the latest assistant message cannot be modified"):
            await model.complete(tampered, TOOLS, lambda t: None, lambda *a: None)
        answer = await model.complete(history, TOOLS, lambda t: None, lambda *a: None)
    assert answer.text == "a holds 1." and "thinking" not in server.requests[-1]


async def test_the_thinking_is_recorded_and_a_resumed_tool_loop_sends_it_back(tmp_path: Path) -> None:
    with FakeAnthropic(*three_reads()[:1], Reply(text="a holds 1.")) as server:
        first = harness(server, tmp_path / "ws")
        await first.run("read a")
        await first.session.close()
        session_id = first.session.session_id
        server.script(Reply(reasoning="Now b.", tool_calls=[call("read_file", file_path="b.txt")]),
                      Reply(reasoning="Done.", text="b holds 2."))
        again = harness(server, tmp_path / "ws", resume=session_id)
        try:
            done = await again.run("and b?")
        finally:
            await again.session.close()
    assert (done.success, server.rejected) == (True, [])
    resent = [m for m in server.requests[-1]["messages"] if m["role"] == "assistant"]
    assert resent[0]["content"][0]["thinking"].startswith("Step 1: I should read a.txt")  # from the file
    assert [b["type"] for b in resent[-1]["content"]][:2] == ["thinking", "tool_use"]


async def test_another_provider_gets_the_conversation_without_thinking_and_reasoning(tmp_path: Path) -> None:
    with FakeAnthropic(*three_reads()[:1], Reply(text="a holds 1.")) as anthropic, \
            FakeLLM(Reply(reasoning="Thinking in the open.", text="ok")) as openai:
        h = harness(anthropic, tmp_path / "ws")
        try:
            await h.run("read a")
            h.session.reconfigure(h.session.config.model_copy(update={"model": openai.model, "api_base": openai.url}))
            done = await h.run("and now?")
        finally:
            await h.session.close()
    assert done.success
    sent = openai.requests[-1]
    assert sent["reasoning_effort"] == "high"
    assert not any(key in m for m in sent["messages"] for key in ("thinking_blocks", "reasoning_content"))
    assert "Thinking in the open." in "".join(e.text for e in h.of("reasoning_delta"))
    # kept for the record and the replay, not sent
    assert h.session.messages[-1]["reasoning_content"] == "Thinking in the open."


async def test_reasoning_off_sends_no_thinking_and_no_blocks(tmp_path: Path) -> None:
    with FakeAnthropic(*three_reads()[:1], Reply(text="a holds 1."), Reply(text="fine")) as server:
        h = harness(server, tmp_path / "ws")
        try:
            await h.run("read a")
            h.session.reasoning = "off"
            done = await h.run("thanks")
        finally:
            await h.session.close()
    assert (done.success, server.rejected) == (True, [])
    last = server.requests[-1]
    assert "thinking" not in last
    assert not any(b.get("type") == "thinking" for m in last["messages"] if isinstance(m["content"], list)
                   for b in m["content"])


async def test_a_model_that_cannot_reason_is_asked_for_none_and_the_run_says_so_once(tmp_path: Path) -> None:
    with FakeAnthropic(Reply(text="one"), Reply(text="two")) as server:
        h = harness(server, tmp_path / "ws", model="anthropic/claude-3-5-haiku-20241022")
        try:
            await h.run("hi")
            done = await h.run("again")
        finally:
            await h.session.close()
    assert (done.success, server.rejected) == (True, [])
    assert all("thinking" not in body for body in server.requests)
    notes = [e.message for e in h.of("warning") if "reasoning" in e.message]
    assert notes == ["anthropic/claude-3-5-haiku-20241022 takes no reasoning effort (litellm knows it as a model "
                     "that does not reason): reasoning high has no effect on it"]


async def test_compaction_keeps_each_thinking_block_with_its_tool_use(tmp_path: Path) -> None:
    steps = three_reads()

    def respond(body: dict[str, Any]) -> Reply:  # the summariser asks without tools
        return steps.pop(0) if body.get("tools") else Reply(text="Summary: a.txt was read.")

    with FakeAnthropic(responder=respond) as server:
        big = {name: "value = 12345\n" * 300 for name in ("a.txt", "b.txt", "c.txt")}
        h = harness(server, tmp_path / "ws", context_window=1000, files=big)
        try:
            done = await h.run("what do a, b and c hold?")
        finally:
            await h.session.close()
    assert (done.success, server.rejected, steps) == (True, [], [])
    assert h.of("compacted")
    for body in server.requests:
        for message in body["messages"]:
            blocks = message["content"] if isinstance(message["content"], list) else []
            if message["role"] == "assistant" and any(b["type"] == "tool_use" for b in blocks):
                assert blocks[0]["type"] in ("thinking", "redacted_thinking")


async def test_the_session_file_keeps_the_blocks_exactly(tmp_path: Path) -> None:
    from agent import paths

    with FakeAnthropic(*three_reads()[:1], Reply(text="a holds 1.")) as server:
        h = harness(server, tmp_path / "ws")
        try:
            await h.run("read a")
        finally:
            await h.session.close()
    lines = [json.loads(line) for f in paths.sessions_dir().rglob("*.jsonl") for line in f.read_text().splitlines()]
    kept = [m["data"]["thinking_blocks"] for m in lines if m["kind"] == "message" and "thinking_blocks" in m["data"]]
    assert kept == [[{"type": "thinking", "thinking": "Step 1: I should read a.txt to see what it holds.",
                      "signature": server.signer.sign("Step 1: I should read a.txt to see what it holds.")}]]
    assert not any(m["kind"] == "event" and m["data"]["type"] == "reasoning_delta" for m in lines)


def test_the_level_comes_from_flags_environment_and_trusted_files_only(tmp_path: Path) -> None:
    from agent.config import ConfigError, load_config

    root = tmp_path / "repo"
    root.mkdir()
    (root / ".coder-tui.toml").write_text('reasoning = "high"\n')
    untrusted = load_config(root, {}, environ={})
    assert untrusted.reasoning == "off"
    assert [i.why for i in untrusted.ignored if "reasoning" in i.setting] == [
        "it would change how much each request thinks, and costs"]
    assert load_config(root, {}, environ={}, trust=True).reasoning == "high"
    assert load_config(None, {}, environ={"CODER_TUI_REASONING": "low"}).reasoning == "low"
    assert load_config(None, {"reasoning": "medium"}, environ={"CODER_TUI_REASONING": "low"}).reasoning == "medium"
    with pytest.raises(ConfigError, match="CODER_TUI_REASONING must be off, low, medium, high"):
        load_config(None, {}, environ={"CODER_TUI_REASONING": "max"})
