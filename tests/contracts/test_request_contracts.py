"""Every request body the built-in clients send, in every scenario, is valid against the provider's
own published schema with unknown keys forbidden (tests/contracts/schemas.py): OpenAI's OpenAPI
document for Chat Completions and Responses, the anthropic SDK's types for Messages.

Scenarios, each through the real session against the scripted servers: a plain answer, a tool loop
with parallel calls, 150 tools (an MCP server's beside the built-in ones), reasoning with its
thinking sent back, an image, a session resumed on another provider, and a compaction.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agent.approval import ScriptedApprover
from agent.config import Config, McpServerSettings
from agent.images import from_bytes
from tests.conftest import ROOT, TEST_KEY, Harness, open_harness
from tests.contracts.schemas import anthropic_errors, openai_errors
from tests.fake_anthropic import FakeAnthropic
from tests.fake_responses import FakeResponses
from tests.fakellm import FakeLLM, Reply, ScriptedServer, call
from tests.media.pictures import png

PROTOCOLS: dict[str, tuple[type[ScriptedServer], str]] = {
    "chat": (FakeLLM, "openai/gpt-5"),  # a reasoning model: max_completion_tokens, reasoning_effort
    "chat-compatible": (FakeLLM, "openai/fake-model"),  # an unknown model on an OpenAI-compatible server
    "anthropic": (FakeAnthropic, "anthropic/claude-sonnet-4-5"),  # thinking with a budget
    "anthropic-adaptive": (FakeAnthropic, "anthropic/claude-opus-4-6"),  # adaptive thinking, output_config
    "responses": (FakeResponses, "openai/gpt-5-codex"),
}
FILES = {"a.txt": "alpha\n", "b.txt": "beta\n"}
MANY = McpServerSettings(command=sys.executable, args=[str(ROOT / "tests" / "mcp_many.py"), "130"])


def errors(server: ScriptedServer, body: dict[str, Any]) -> list[str]:
    if isinstance(server, FakeAnthropic):
        return anthropic_errors(body)
    return openai_errors("CreateResponse" if isinstance(server, FakeResponses) else "CreateChatCompletionRequest", body)


def harness(server: ScriptedServer, model: str, root: Path, resume: str | None = None, **settings: Any) -> Harness:
    config = Config(model=model, api_base=server.url, api_key=SecretStr(TEST_KEY), mode="allow", timeout=20.0,
                    max_retries=0, **settings)  # type: ignore[arg-type]
    return open_harness(server, root, FILES, config, ScriptedApprover([]), resume)  # type: ignore[arg-type]


async def plain(h: Harness) -> None:
    h.script(Reply(text="Hello."))
    assert (await h.run("say hi")).success


async def parallel_calls(h: Harness) -> None:
    h.script(Reply(text="Reading both.", tool_calls=[call("read_file", file_path="a.txt"),
                                                     call("read_file", file_path="b.txt")]),
             Reply(text="alpha and beta"))
    assert (await h.run("read a and b")).final_response == "alpha and beta"


async def many_tools(h: Harness) -> None:
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="done"))
    assert (await h.run("read a")).success


async def reasoning(h: Harness) -> None:
    h.script(Reply(reasoning="I should read a.", tool_calls=[call("read_file", file_path="a.txt")]),
             Reply(reasoning="Now b.", redacted_thinking=True, tool_calls=[call("read_file", file_path="b.txt")]),
             Reply(reasoning="Both read.", text="alpha, beta"))
    assert (await h.run("read a then b")).final_response == "alpha, beta"


async def image(h: Harness) -> None:
    h.script(Reply(text="A small square."))
    assert (await h.session.run("what is this?", [from_bytes(png(shade=9), "shot.png")])).success


async def compaction(h: Harness) -> None:
    steps = [Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="answer")] * 4

    def respond(body: dict[str, Any]) -> Reply:  # the summary is asked for without tools
        return steps.pop(0) if body.get("tools") else Reply(text="## Goal\nanswer questions about a.txt")

    h.llm.responder = respond
    for turn in range(4):
        assert (await h.run(f"question {turn} " + "about the file " * 40)).success
    assert h.of("compacted"), "the small window should have made the session compact"


SCENARIOS: dict[str, tuple[Callable[[Harness], Awaitable[None]], dict[str, Any]]] = {
    "plain": (plain, {}), "parallel-calls": (parallel_calls, {}), "150-tools": (many_tools, {"mcp_servers": {"many": MANY}}),
    "reasoning": (reasoning, {"reasoning": "high"}), "image": (image, {"vision": True}),
    "compaction": (compaction, {"context_window": 1000}),  # a small window: the first turns are summarised
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("protocol", list(PROTOCOLS))
async def test_every_request_matches_the_providers_schema(protocol: str, scenario: str, tmp_path: Path) -> None:
    kind, model = PROTOCOLS[protocol]
    run, settings = SCENARIOS[scenario]
    with kind() as server:
        h = harness(server, model, tmp_path / "ws", **settings)
        try:
            await run(h)
        finally:
            await h.session.close()
    assert server.requests and server.rejected == []
    problems = {n: found for n, body in enumerate(server.requests) if (found := errors(server, body))}
    assert problems == {}, problems
    if scenario == "150-tools":
        sent = len(server.requests[0]["tools"])
        assert sent > 150 if isinstance(server, FakeAnthropic) else sent == 128


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
async def test_a_session_resumed_on_another_provider_sends_what_the_new_one_takes(protocol: str,
                                                                                  tmp_path: Path) -> None:
    kind, model = PROTOCOLS[protocol]
    # the history another provider wrote: Anthropic's signed thinking and toolu_ ids, or Chat's
    # reasoning text and call_ ids
    first_kind, first_model = PROTOCOLS["chat" if kind is FakeAnthropic else "anthropic"]
    with first_kind() as first:
        h = harness(first, first_model, tmp_path / "ws", reasoning="high")
        try:
            await reasoning(h)
        finally:
            await h.session.close()
    with kind(Reply(reasoning="Read b again.", tool_calls=[call("read_file", file_path="b.txt")]),
              Reply(text="beta again")) as server:
        resumed = harness(server, model, tmp_path / "ws", h.session.session_id, reasoning="high")
        try:
            assert (await resumed.run("read b once more")).final_response == "beta again"
        finally:
            await resumed.session.close()
    assert server.rejected == []
    problems = {n: found for n, body in enumerate(server.requests) if (found := errors(server, body))}
    assert problems == {}, problems
