"""What litellm does after each call that we do not use stays off (issue 15, item 17).

Each of these cost milliseconds a step: a new worker thread per call, tokenizing the whole
conversation to price a request nobody reads the price of, and reading the stream past its usage
chunk (litellm then assembles the answer a second time and runs its success logging).
tests/bench/bench_core.py measures the step; these tests pin the causes.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent.llm import LLM, ensure_loaded
from tests.fakellm import FakeLLM, Reply, call

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {}}}}]


async def calls(server: FakeLLM, count: int) -> None:
    model = LLM(server.model, server.url, "sk-test-overhead-000000")
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


async def test_worker_threads_are_reused_across_calls(monkeypatch: pytest.MonkeyPatch) -> None:
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
    assert len(workers) <= 2, f"{len(workers)} worker threads started for 12 calls"


async def test_the_conversation_is_not_tokenized_and_the_stream_ends_at_its_usage(
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
    with FakeLLM(*[Reply(tool_calls=[call("read_file")], usage=(100, 5))] * 5) as server:
        await calls(server, 5)
    assert counted == []  # no tokenizing of the prompt: the provider reports usage
    assert len(built) == 5  # once a call (the usage chunk), not twice
    assert logged == []  # litellm's success logging: no loggers are registered
