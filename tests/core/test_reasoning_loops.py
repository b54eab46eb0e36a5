"""Thinking across a tool loop that does not end where it began (issue 35): a secret in a signed
thinking block, and reasoning turned on inside a loop, against servers that refuse what Anthropic
refuses (tests/anthropic_rules.py): a changed block ("cannot be modified", "Invalid `signature`")
and a thinking-on request whose last tool-use turn has no thinking block.

Each case runs on the built-in Anthropic client, litellm's Anthropic adapter and a LiteLLM proxy
in front of Claude (chat.py sends it `thinking_blocks`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.llm.reasoning import held_note
from tests.core.test_reasoning import harness
from tests.fake_anthropic import FakeAnthropic
from tests.fake_litellm_proxy import FakeLiteLLMProxy
from tests.fakellm import Reply, call

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape: masked wherever it goes
PATHS: dict[str, tuple[Any, dict[str, Any]]] = {
    "anthropic": (FakeAnthropic, {}),
    "anthropic-via-litellm": (FakeAnthropic, {"model_path": "litellm"}),
    "litellm-proxy": (FakeLiteLLMProxy, {}),
}


def refusals(server: Any) -> list[str]:
    return [r if isinstance(r, str) else r[1] for r in server.rejected]


def thinks(server: Any, body: dict[str, Any]) -> bool:
    """Whether the request asked for thinking (Anthropic's field, or the proxy's effort)."""
    return "thinking" in body if isinstance(server, FakeAnthropic) else bool(body.get("reasoning_effort"))


def recorded_assistants() -> list[dict[str, Any]]:
    from agent import paths

    lines = [json.loads(line) for f in paths.sessions_dir().rglob("*.jsonl") for line in f.read_text().splitlines()]
    return [m["data"] for m in lines if m["kind"] == "message" and m["data"]["role"] == "assistant"]


def session_text() -> str:
    from agent import paths

    return "".join(f.read_text() for f in paths.sessions_dir().rglob("*.jsonl"))


def read(name: str, thought: str = "") -> Reply:
    return Reply(reasoning=thought, tool_calls=[call("read_file", file_path=name)])


@pytest.mark.parametrize("path", PATHS)
async def test_a_secret_in_the_thinking_of_an_open_tool_loop_stays_out_of_the_file_and_the_loop_goes_on(
        tmp_path: Path, path: str) -> None:
    make, extra = PATHS[path]
    with make(read("a.txt", f"The token {SECRET} is in .env; read a.txt first.")) as server:
        first = harness(server, tmp_path / "ws", max_steps=1, **extra)
        try:
            stopped = await first.run("read a")  # the step limit leaves the loop open
        finally:
            await first.session.close()
        text, kept = session_text(), recorded_assistants()[-1]
        server.script(Reply(text="a holds 1."), read("b.txt", "Now b."), Reply(reasoning="Done.", text="b holds 2."))
        again = harness(server, tmp_path / "ws", resume=first.session.session_id, max_steps=5, **extra)
        try:
            ended = await again.run("go on")
            after = await again.run("and b?")
        finally:
            await again.session.close()
    assert refusals(server) == [] and (ended.success, after.success) == (True, True)
    assert stopped.completion_reason == "max_steps" and SECRET not in text
    assert "thinking_blocks" not in kept  # a masked block with its signature would be refused
    assert kept["reasoning_content"] == "The token [redacted] is in .env; read a.txt first."
    # the loop goes on without thinking (its last turn has no block to send back), the next one thinks
    assert [thinks(server, body) for body in server.requests[1:]] == [False, True, True]
    assert [e.message for e in again.of("warning")] == [held_note(server.model, "high")]


@pytest.mark.parametrize("path", PATHS)
async def test_a_secret_in_the_thinking_of_a_past_turn_leaves_that_turn_without_blocks(
        tmp_path: Path, path: str) -> None:
    make, extra = PATHS[path]
    with make(read("a.txt", f"The token {SECRET} is in .env; read a.txt first."),
              Reply(reasoning="Read it.", text="a holds 1.")) as server:
        first = harness(server, tmp_path / "ws", **extra)
        try:
            await first.run("read a")
        finally:
            await first.session.close()
        text = session_text()
        server.script(read("b.txt", "Now b."), Reply(reasoning="Done.", text="b holds 2."))
        again = harness(server, tmp_path / "ws", resume=first.session.session_id, **extra)
        try:
            done = await again.run("and b?")
        finally:
            await again.session.close()
    assert refusals(server) == [] and done.success and SECRET not in text
    assert all(thinks(server, body) for body in server.requests)
    assert not [e for e in again.of("warning") if "reasoning" in e.message]


@pytest.mark.parametrize("path", PATHS)
async def test_reasoning_turned_on_inside_a_tool_loop_starts_with_the_next_loop(tmp_path: Path, path: str) -> None:
    make, extra = PATHS[path]
    with make(read("a.txt"), read("b.txt"), Reply(text="a and b hold 1 and 2."),
              read("c.txt", "Now c."), Reply(reasoning="Done.", text="c holds 3.")) as server:
        h = harness(server, tmp_path / "ws", reasoning="off", max_steps=2, **extra)
        try:
            stopped = await h.run("read a and b")  # two calls, then the step limit: the loop is open
            h.session.reasoning = "high"
            held = h.session.note_reasoning_held()
            ended = await h.run("go on")
            after_loop = h.session.note_reasoning_held()
            done = await h.run("and c?")
        finally:
            await h.session.close()
    assert refusals(server) == [] and (ended.success, done.success) == (True, True)
    assert stopped.completion_reason == "max_steps" and (held, after_loop) == (True, False)
    assert [thinks(server, body) for body in server.requests] == [False, False, False, True, True]
    assert [e.message for e in h.of("warning")] == [held_note(server.model, "high")]


@pytest.mark.parametrize("model_path", ["auto", "litellm"])
async def test_deepseek_gets_the_reasoning_of_its_tool_call_turns_back(tmp_path: Path, model_path: str) -> None:
    """DeepSeek's thinking mode (on by default, whatever the level) refuses a request whose tool-call
    turns lack their `reasoning_content`; a resumed one gets it as the file kept it (masked)."""
    from tests.fake_deepseek import FakeDeepSeek

    with FakeDeepSeek(read("a.txt", f"The token {SECRET} is in .env; read a.txt first."), read("b.txt", "Now b."),
                      Reply(reasoning="Both read.", text="a and b hold 1 and 2.")) as server:
        first = harness(server, tmp_path / "ws", reasoning="off", model_path=model_path)
        try:
            done = await first.run("read a and b")
        finally:
            await first.session.close()
        server.script(read("c.txt", "Now c."), Reply(reasoning="Done.", text="c holds 3."))
        again = harness(server, tmp_path / "ws", resume=first.session.session_id, model_path=model_path)
        try:
            after = await again.run("and c?")
        finally:
            await again.session.close()
    assert refusals(server) == [] and (done.success, after.success) == (True, True)
    sent = [m for m in server.requests[-1]["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert [m["reasoning_content"] for m in sent] == [
        "The token [redacted] is in .env; read a.txt first.", "Now b.", "Now c."]


async def test_deepseek_gets_an_empty_reasoning_for_another_models_tool_call_turn() -> None:
    from agent.llm import LLM
    from tests.core.test_reasoning import KEY, TOOLS
    from tests.fake_deepseek import FakeDeepSeek

    foreign = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"file_path": "a.txt"}'}}]}
    history = [{"role": "user", "content": "read a"}, foreign, {"role": "tool", "tool_call_id": "call_1", "content": "1"}]
    with FakeDeepSeek(Reply(reasoning="It holds 1.", text="a holds 1.")) as server:
        reply = await LLM(server.model, server.url, KEY, max_retries=0).complete(history, TOOLS, lambda t: None,
                                                                                lambda *a: None)
    assert refusals(server) == [] and reply.text == "a holds 1."
    assert server.requests[0]["messages"][1]["reasoning_content"] == ""
