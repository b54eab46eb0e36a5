"""The built-in clients and litellm agree: the same scripted conversation, through each path against
the same kind of scripted server, gives the same event stream (text, reasoning, tool calls and
their results, usage and cost, the outcome), so that the two paths cannot drift apart silently.

`model_path = "litellm"` sends the model through litellm's own adapter for its provider (its
Anthropic, Ollama and Responses adapters, its OpenAI client); the default takes the built-in client.
Each path gets a fresh server. Call ids are compared by their order of appearance (litellm names a
Responses call by its item id, the built-in client by its `call_id`: either pairs the result with
its call). Usage is scripted (the servers' own estimates measure the request's JSON, whose layout
differs between Ollama's two APIs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agent.approval import ScriptedApprover
from agent.config import Config
from tests.conftest import TEST_KEY, open_harness
from tests.fake_anthropic import FakeAnthropic
from tests.fake_mistral import FakeMistral
from tests.fake_ollama import FakeOllama
from tests.fake_responses import FakeResponses
from tests.fakellm import FakeLLM, Reply, ScriptedServer, call

SERVERS = {"openai": FakeLLM, "anthropic": FakeAnthropic, "responses": FakeResponses, "ollama": FakeOllama,
           "mistral": FakeMistral}
FILES = {"a.txt": "alpha\n", "b.txt": "beta\n"}


def conversation(reasoning: bool) -> list[list[Reply]]:
    """Two turns: parallel calls then an answer; a call whose arguments come in many pieces, then an answer."""
    thought = {"reasoning": "Let me look at both files first."} if reasoning else {}
    first = [Reply(text="Reading both files.", chunk_size=5, usage=(1200, 40), cache_read=800, cache_write=100,
                   tool_calls=[call("read_file", file_path="a.txt"), call("read_file", file_path="b.txt")], **thought),
             Reply(text="They hold alpha and beta.", usage=(1300, 12), cache_read=1100)]
    second = [Reply(tool_calls=[call("grep", pattern="alp", path=".")], usage=(1400, 20), **thought),
              Reply(text="alpha is in a.txt.", chunk_size=3, usage=(1500, 9))]
    return [first, second]


def shape(event: Any) -> tuple[Any, ...] | None:
    kind = event.type
    if kind == "tool_call":
        return (kind, event.call_id, event.tool, json.dumps(event.args, sort_keys=True))
    if kind == "tool_result":
        return (kind, event.call_id, event.ok, event.output)
    if kind == "usage":
        return (kind, event.prompt_tokens, event.completion_tokens, event.cached_tokens, event.cache_write_tokens,
                round(event.cost or 0.0, 9), event.reasoning_tokens, event.total_prompt_tokens,
                event.total_completion_tokens)
    if kind == "complete":
        return (kind, event.success, event.iterations, event.final_response, event.completion_reason)
    if kind in ("step_started", "warning", "error", "retrying"):
        return (kind, getattr(event, "iteration", None) or getattr(event, "message", None) or getattr(event, "why", ""))
    return None


def stream(events: list[Any]) -> list[tuple[Any, ...]]:
    """The events that matter, with each step's streamed text and reasoning joined and call ids
    numbered in order."""
    ids: dict[str, str] = {}
    for event in events:
        if event.type == "tool_call":
            ids.setdefault(event.call_id, f"call#{len(ids)}")
    events = [e.model_copy(update={"call_id": ids.get(e.call_id, e.call_id)}) if hasattr(e, "call_id") else e
              for e in events]
    out: list[tuple[Any, ...]] = []
    text, thought = "", ""
    for event in events:
        if event.type == "text_delta":
            text += event.text
            continue
        if event.type == "reasoning_delta":
            thought += event.text
            continue
        shaped = shape(event)
        if shaped is None:
            continue
        if text or thought:
            out.append(("said", thought, text))
            text, thought = "", ""
        out.append(shaped)
    return out


async def through(path: str, kind: type[ScriptedServer], tmp_path: Path, reasoning: bool) -> tuple[list[Any], Any]:
    with kind() as server:
        config = Config(model=server.model, api_base=server.url, api_key=SecretStr(TEST_KEY), mode="allow",
                        timeout=20.0, max_retries=0, model_path=path,  # type: ignore[arg-type]
                        reasoning="high" if reasoning else "off")
        h = open_harness(server, tmp_path / path, FILES, config, ScriptedApprover([]))  # type: ignore[arg-type]
        try:
            for turn, replies in enumerate(conversation(reasoning)):
                server.script(*replies)
                await h.run(f"question {turn}")
        finally:
            await h.session.close()
    return stream(h.events), server


@pytest.mark.parametrize("reasoning", [False, True], ids=["plain", "reasoning"])
@pytest.mark.parametrize("provider", list(SERVERS))
async def test_the_built_in_client_and_litellm_give_the_same_events(provider: str, reasoning: bool,
                                                                    tmp_path: Path) -> None:
    if reasoning and provider in ("ollama", "mistral"):
        pytest.skip("the scripted Ollama and Mistral servers stream no reasoning")
    built_in, first = await through("auto", SERVERS[provider], tmp_path, reasoning)
    litellm, second = await through("litellm", SERVERS[provider], tmp_path, reasoning)
    assert first.rejected == [] and second.rejected == []
    assert built_in == litellm
    assert [e for e in built_in if e[0] == "complete"] == [("complete", True, 2, "They hold alpha and beta.", "answered"),
                                                          ("complete", True, 2, "alpha is in a.txt.", "answered")]
    said = [e for e in built_in if e[0] == "said"]
    assert said[0][2] == "Reading both files." and (said[0][1] != "") == reasoning
