"""What litellm does after each call that we do not use stays off (issue 15, item 17).

Each of these cost milliseconds a step: a worker thread per call, tokenizing the whole
conversation to price a request nobody reads the price of, assembling the streamed answer a second
time (in an AnyIO worker thread) and pricing it at the end of each stream, and reading the stream
past its usage chunk (litellm then runs its success logging).
tests/bench/bench_core.py measures the step; these tests pin the causes.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent.llm import LLM, ensure_loaded
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import FakeLLM, Reply, call

OPENAI_FORMAT = "hosted_vllm/fake-model"  # litellm strips cache_control on this route (not on openai/ at loopback)
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {}}}}]


async def calls(server: FakeLLM, count: int, name: str = "") -> None:
    model = LLM(name or server.model, server.url, "sk-test-overhead-000000")
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent. " * 50},
                                     {"role": "user", "content": "read it"}]
    for _ in range(count):
        reply = await model.complete(history, TOOLS, lambda text: None, lambda *a: None)
        assert reply.tool_calls and reply.prompt_tokens == 100
        history.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": reply.tool_calls[0].id, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]})
        history.append({"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "x = 1"})


def spy(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    seen: list[int] = []
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return seen


async def test_no_worker_thread_is_started_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    await ensure_loaded()
    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    with FakeLLM(*[Reply(tool_calls=[call("read_file")], usage=(100, 5))] * 12) as server:
        await calls(server, 12)
    workers = [name for name in started if name.startswith("AnyIO")]
    # litellm's end of stream ran in an AnyIO worker thread; it now runs on the request loop
    assert workers == [], f"{len(workers)} worker threads started for 12 calls"


async def test_the_conversation_is_not_tokenized_nor_the_answer_assembled_twice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    litellm = await ensure_loaded()
    from litellm import _lazy_imports
    from litellm.litellm_core_utils import streaming_chunk_builder_utils
    from litellm.litellm_core_utils.litellm_logging import Logging

    _lazy_imports.get_token_counter_new()  # litellm caches the counter it calls here
    counted = spy(monkeypatch, _lazy_imports, "_token_counter_new_func")
    built = spy(monkeypatch, streaming_chunk_builder_utils, "stream_chunk_builder")
    monkeypatch.setattr(litellm, "stream_chunk_builder", streaming_chunk_builder_utils.stream_chunk_builder)
    logged = spy(monkeypatch, Logging, "dispatch_success_handlers")
    priced: list[str] = []
    real_price = Logging.response_cost_calculator

    def price(self: Any, result: Any, **kwargs: Any) -> Any:
        priced.append(type(result).__name__)
        return real_price(self, result, **kwargs)

    monkeypatch.setattr(Logging, "response_cost_calculator", price)
    with FakeLLM(*[Reply(tool_calls=[call("read_file")], usage=(100, 5))] * 5) as server:
        await calls(server, 5)
    assert counted == []  # no tokenizing of the prompt: the provider reports usage
    assert built == []  # litellm does not assemble the answer a second time (we do it once)
    # nor prices it (agent/llm_usage.py does, from the provider's usage); litellm still tries to
    # price the stream itself as it starts, which has no setting to turn off
    assert priced == ["CustomStreamWrapper"] * 5
    assert logged == []  # litellm's success logging: no loggers are registered


def test_the_end_of_stream_patch_still_applies_to_this_litellm() -> None:
    """usage_without_assembly replaces one method of litellm's stream wrapper: an upgrade that
    renames it, stops calling it at the end of a stream or drops what it reads fails here."""
    import inspect

    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

    from agent.llm_usage import _litellm_checked

    assert _litellm_checked(), "litellm is outside the versions usage_without_assembly was checked on"
    finalize = inspect.getsource(CustomStreamWrapper._finalize_completed_stream)
    assert "await self._async_build_complete_streaming_response()" in finalize
    init = inspect.getsource(CustomStreamWrapper.__init__)
    for attribute in ("self.chunks", "self.response_uptil_now", "self.count_prompt_tokens"):
        assert attribute in init


async def test_text_tool_calls_and_usage_stay_right_without_the_second_assembly() -> None:
    await ensure_loaded()
    replies = [Reply(text="hello there", usage=(1200, 7)), Reply(tool_calls=[call("read_file")], usage=(90, 3))]
    with FakeLLM(*replies) as server:
        model = LLM(server.model, server.url, "sk-test-overhead-000000")
        got = [await model.complete([{"role": "user", "content": "hi"}], TOOLS, lambda t: None, lambda *a: None)
               for _ in replies]
    assert (got[0].text, got[0].prompt_tokens, got[0].completion_tokens) == ("hello there", 1200, 7)
    assert (got[1].tool_calls[0].name, got[1].prompt_tokens, got[1].completion_tokens) == ("read_file", 90, 3)
    assert all(reply.usage_seen and reply.finish_reason for reply in got)
    # cache reads/writes and the cost at cache prices: tests/core/test_prompt_caching.py


async def test_unmarked_requests_skip_litellms_cache_control_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's scan for cache_control (Protocol checks on every message and schema node) runs
    only for requests that carry a marker; a marked one is still stripped on an OpenAI route."""
    await ensure_loaded()
    from litellm.llms.openai import common_utils

    scanned = spy(monkeypatch, common_utils, "_contains_cache_control")
    with FakeLLM(*[Reply(tool_calls=[call("read_file")], usage=(100, 5))] * 4) as server:
        await calls(server, 3, OPENAI_FORMAT)
        assert scanned == []
        marked = [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]
        model = LLM(OPENAI_FORMAT, server.url, "sk-test-overhead-000000")
        await model.complete(marked, TOOLS, lambda text: None, lambda *a: None)
        assert scanned
        sent = server.requests[-1]["messages"][0]["content"][0]
    assert sent == {"type": "text", "text": "hi"}
    assert marked[0]["content"][0]["cache_control"] == {"type": "ephemeral"}  # the caller's copy is kept


def test_the_cache_control_shortcut_still_applies_to_this_litellm() -> None:
    """strip_cache_control_only_when_marked replaces OpenAIGPTConfig's strip: an upgrade that stops
    calling it, or stops scanning through common_utils._contains_cache_control, fails here."""
    import inspect

    from litellm.llms.openai import common_utils
    from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig

    from agent.llm_usage import strip_cache_control_only_when_marked

    strip_cache_control_only_when_marked()
    assert getattr(OpenAIGPTConfig.remove_cache_control_flag_from_messages_and_tools, "skips_unmarked", False)
    dialect = inspect.getsource(OpenAIGPTConfig._messages_and_tools_in_cache_mark_dialect)
    assert "self.remove_cache_control_flag_from_messages_and_tools(" in dialect
    assert "_contains_cache_control(item)" in inspect.getsource(common_utils.without_cache_control)


def wire_marks(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(wire_marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(wire_marks(v) for v in value)
    return 0


async def test_anthropic_requests_within_the_mark_cap_skip_litellms_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's per-message cache_control count (pydantic validation of every message and block)
    runs only when a request may carry more marks than Anthropic takes; then it still drops the oldest."""
    await ensure_loaded()
    from litellm.integrations import anthropic_cache_control_hook as hook

    counted = spy(monkeypatch, hook, "cache_control_count")
    with FakeAnthropic(*[Reply(tool_calls=[call("read_file")], usage=(100, 5))] * 4) as server:
        await calls(server, 3)
        assert counted == []
        assert [wire_marks(body) for body in server.requests] == [3, 4, 4]  # tool, system, last (and previous end)
        crowded = [{"role": "user", "content": [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}}
                                                for i in range(6)]}]
        model = LLM(server.model, server.url, "sk-ant-test-overhead-0000")
        await model.complete(crowded, TOOLS, lambda text: None, lambda *a: None)
        assert counted
        sent = server.requests[-1]
    assert wire_marks(sent) == 4
    assert [wire_marks(block) for block in sent["messages"][0]["content"]] == [0, 0, 0, 1, 1, 1]


def test_the_anthropic_mark_cap_shortcut_still_applies_to_this_litellm() -> None:
    """cap_cache_marks_only_when_over replaces AnthropicConfig's cap: an upgrade that stops calling
    it, or stops counting through cache_control_count, fails here."""
    import inspect

    from litellm.integrations import anthropic_cache_control_hook as hook
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    from agent.llm_usage import cap_cache_marks_only_when_over

    cap_cache_marks_only_when_over()
    assert getattr(AnthropicConfig._messages_within_cache_control_cap, "skips_within_cap", False)
    assert "self._messages_within_cache_control_cap(" in inspect.getsource(AnthropicConfig.transform_request)
    assert "cache_control_count" in inspect.getsource(hook.messages_within_cache_control_cap)
    assert hook.MAX_CACHE_CONTROL_BLOCKS == 4 and "cache_control" in hook.CACHE_BREAKPOINT_KEYS


async def test_requests_copy_the_conversation_without_litellms_signature_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's per-message walk for Gemini thought signatures in tool call ids runs only when an
    id carries one; then the signature is still cut off on the wire, and our history keeps it."""
    await ensure_loaded()
    import litellm.utils

    walked = spy(monkeypatch, litellm.utils, "_process_assistant_message_tool_calls")
    with FakeLLM(*[Reply(tool_calls=[call("read_file")], usage=(100, 5))] * 4) as server:
        await calls(server, 3, OPENAI_FORMAT)
        assert walked == []
        signed = [{"role": "user", "content": "read it"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "call_1__thought__c2lnbmF0dXJl", "type": "function",
                       "function": {"name": "read_file", "arguments": "{}"}}]},
                  {"role": "tool", "tool_call_id": "call_1__thought__c2lnbmF0dXJl", "content": "x = 1"}]
        model = LLM(OPENAI_FORMAT, server.url, "sk-test-overhead-000000")
        await model.complete(signed, TOOLS, lambda text: None, lambda *a: None)
        assert walked
        sent = server.requests[-1]["messages"]
    assert (sent[1]["tool_calls"][0]["id"], sent[2]["tool_call_id"]) == ("call_1", "call_1")
    assert signed[1]["tool_calls"][0]["id"] == "call_1__thought__c2lnbmF0dXJl"


def test_the_signature_walk_shortcut_still_applies_to_this_litellm() -> None:
    """copy_messages_without_signature_scan replaces litellm.utils' walk: an upgrade that stops
    calling it by that name, or changes the separator it looks for, fails here."""
    import inspect

    import litellm.utils
    from litellm.litellm_core_utils.prompt_templates.factory import THOUGHT_SIGNATURE_SEPARATOR

    from agent.llm_requests import copy_messages_without_signature_scan

    copy_messages_without_signature_scan()
    assert getattr(litellm.utils._remove_thought_signatures_from_messages, "copies_directly", False)
    setup = inspect.getsource(litellm.utils.function_setup)
    assert "_remove_thought_signatures_from_messages(" in setup and "THOUGHT_SIGNATURE_SEPARATOR" in setup
    assert THOUGHT_SIGNATURE_SEPARATOR == "__thought__"


async def test_a_stream_is_not_priced_when_it_starts_but_a_finished_response_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm prices each streamed request as it starts (nothing to price yet; we never read it);
    a finished response (the model check) still goes through litellm's pricing."""
    litellm = await ensure_loaded()

    priced = spy(monkeypatch, litellm, "response_cost_calculator")
    with FakeLLM(*[Reply(tool_calls=[call("read_file")], usage=(100, 5))] * 3, Reply("OK")) as server:
        await calls(server, 3, OPENAI_FORMAT)
        assert priced == []
        assert await LLM(OPENAI_FORMAT, server.url, "sk-test-overhead-000000").check() == "OK"
    assert priced


def test_the_stream_pricing_shortcut_still_applies_to_this_litellm() -> None:
    """no_price_for_a_stream_not_read_yet replaces Logging.response_cost_calculator for streams: an
    upgrade that stops pricing the stream through it when a request starts fails here."""
    import inspect

    from litellm.litellm_core_utils.litellm_logging import Logging
    from litellm.litellm_core_utils.llm_response_utils import response_metadata

    from agent.llm_requests import no_price_for_a_stream_not_read_yet

    no_price_for_a_stream_not_read_yet()
    assert getattr(Logging.response_cost_calculator, "skips_streams", False)
    assert "logging_obj.response_cost_calculator(" in inspect.getsource(response_metadata.ResponseMetadata.set_hidden_params)
