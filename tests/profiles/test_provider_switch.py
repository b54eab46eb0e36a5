"""A conversation that moves to another provider mid-run (a fallback model) keeps its tool calls
acceptable: Mistral takes only nine-letter-or-digit call ids, so the OpenAI model's ids are
rewritten for it, the same in each call and its result (agent/llm/toolschema.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fake_mistral import FakeMistral
from tests.fakellm import Reply, ToolCallSpec


@pytest.fixture
def fake_llm() -> Iterator[FakeMistral]:
    """One server behind both models; Mistral's id rule applies to the Mistral model's requests."""
    with FakeMistral() as server:
        yield server


async def test_a_fallback_to_mistral_sends_the_openai_call_ids_rewritten(make_session: Any,
                                                                          fake_llm: FakeMistral) -> None:
    h = make_session(model="openai/fake-model", fallback_models=["mistral/mistral-large-latest"],
                     files={"a.txt": "alpha\n"})
    h.script(Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": "a.txt"}, id="call_Xy7-1")]),
             Reply(status=500), Reply(status=500),  # the OpenAI model gives up: the fallback takes over
             Reply(text="Read it."))
    complete = await h.run("read a.txt")
    assert (complete.completion_reason, complete.final_response) == ("answered", "Read it.")
    assert [e.to_model for e in h.of("model_fallback")] == ["mistral/mistral-large-latest"]
    assert fake_llm.rejected == []
    first, last = fake_llm.requests[1]["messages"], fake_llm.requests[-1]["messages"]
    assert [m["tool_calls"][0]["id"] for m in first if m.get("tool_calls")] == ["call_Xy7-1"]  # OpenAI's own
    call_ids = [m["tool_calls"][0]["id"] for m in last if m.get("tool_calls")]
    result_ids = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert call_ids == result_ids and re.fullmatch(r"[a-zA-Z0-9]{9}", call_ids[0])
    assert "alpha" in [m["content"] for m in last if m["role"] == "tool"][0]
