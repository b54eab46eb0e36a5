"""Anthropic prompt caching: breakpoints in the requests, cached tokens in usage, cost at cache prices."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.fake_ollama import FakeOllama
from tests.fakellm import FakeLLM, Reply, ScriptedServer, call


@pytest.fixture
def fake_llm() -> Iterator[ScriptedServer]:
    with FakeAnthropic() as server:
        yield server


def markers(value: Any) -> list[Any]:
    """Every object in a request body that carries a cache_control breakpoint."""
    if isinstance(value, dict):
        found = [value] if "cache_control" in value else []
        return found + [m for v in value.values() for m in markers(v)]
    if isinstance(value, list):
        return [m for v in value for m in markers(v)]
    return []


def last_block(message: dict[str, Any]) -> dict[str, Any]:
    return message["content"][-1]


async def test_requests_mark_tools_system_and_the_conversation_prefix(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n", "b.txt": "y\n"})
    h.script(Reply(text="First a.", tool_calls=[call("read_file", file_path="a.txt")]),
             Reply(tool_calls=[call("read_file", file_path="a.txt"), call("read_file", file_path="b.txt")]),
             Reply(text="done"))
    await h.run("read them")
    h.script(Reply(text="again"))
    await h.run("once more")
    assert len(h.llm.requests) == 4
    for number, body in enumerate(h.llm.requests):
        assert len(markers(body)) <= 4, f"request {number}: Anthropic allows 4 breakpoints"
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in tool for tool in body["tools"][:-1])
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert last_block(body["messages"][-1])["cache_control"] == {"type": "ephemeral"}
    # From the second request on, the end of the previous request is marked too: what was
    # written to the cache then is read now, however many tool results came after it.
    first, second, third, fourth = h.llm.requests
    assert len(markers(first)) == 3 and len(markers(second)) == 4
    previous_end = len(first["messages"]) - 1
    assert last_block(second["messages"][previous_end]) == {**last_block(first["messages"][-1])}
    assert "cache_control" in last_block(third["messages"][len(second["messages"]) - 1])
    assert "cache_control" in last_block(fourth["messages"][len(third["messages"]) - 1])
    # The markers live in requests only: the conversation and the session file stay plain.
    assert "cache_control" not in json.dumps(h.session.messages)
    assert "cache_control" not in h.session.writer.path.read_text()


async def test_cached_tokens_reach_usage_and_cost_uses_cache_prices(make_harness: Any) -> None:
    from agent.llm.facts import table

    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")], usage=(5000, 20), cache_write=4000),
             Reply(text="done", usage=(5100, 10), cache_read=4000, cache_write=50))
    await h.run()
    first, second = h.of("usage")
    assert (first.prompt_tokens, first.cached_tokens, first.cache_write_tokens) == (5000, 0, 4000)
    assert (second.prompt_tokens, second.cached_tokens, second.cache_write_tokens) == (5100, 4000, 50)
    assert (second.total_prompt_tokens, second.total_cached_tokens, second.total_cache_write_tokens) == (10100, 4000, 4050)
    prices = table()["claude-sonnet-4-5"]
    expected = (1050 * prices["input_cost_per_token"] + 4000 * prices["cache_read_input_token_cost"]
                + 50 * prices["cache_creation_input_token_cost"] + 10 * prices["output_cost_per_token"])
    assert second.cost == pytest.approx(expected)
    # A cache read costs a tenth of an uncached token: the same prompt uncached costs more.
    assert second.cost < (5100 * prices["input_cost_per_token"] + 10 * prices["output_cost_per_token"]) / 2
    assert second.total_cost == pytest.approx(first.cost + second.cost)
    session_id = h.session.session_id
    await h.session.close()
    resumed = make_harness(resume=session_id)
    assert (resumed.session.totals.cached_tokens, resumed.session.totals.cache_write_tokens) == (4000, 4050)


@pytest.mark.parametrize("server", [FakeLLM, FakeOllama])
async def test_other_providers_get_no_markers(server: type[ScriptedServer], tmp_path: Any) -> None:
    from agent.llm import LLM

    with server(Reply(text="plain", cache_read=7)) as fake:
        model = LLM(fake.model, fake.url, "sk-test-plain-0000000000")
        tools = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {}}}}]
        reply = await model.complete([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                                     tools, lambda text: None, lambda *a: None)
    assert reply.text == "plain" and markers(fake.requests[0]) == []
    if server is FakeLLM:  # OpenAI reports cache reads as prompt_tokens_details.cached_tokens
        assert reply.cache_read_tokens == 7
