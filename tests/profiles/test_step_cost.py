"""A step's own cost does not grow with the conversation: compaction's estimate serialises only the
messages appended since the last step, and the tool schemas are built once per offer."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from agent import compaction
from agent.compaction import Sizes, estimate_tokens
from agent.profiles import toolset
from tests.fakellm import Reply, call

STEPS = 12


def test_the_incremental_count_matches_the_whole_estimate() -> None:
    sizes = Sizes()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "you are ü"}]
    tools = toolset.Schemas.from_text(json.dumps([{"type": "function", "function": {"name": "t"}}]))
    for turn in range(5):
        messages.append({"role": "user", "content": f"question {turn} ✓"})
        messages.append({"role": "assistant", "content": "answer " * turn})
        assert sizes.chars(messages, tools) // 4 + 1 == estimate_tokens(messages, list(tools))
    messages[0] = {"role": "system", "content": "rewritten, as the ReAct agent does"}
    assert sizes.chars(messages) // 4 + 1 == estimate_tokens(messages)
    messages[1:5] = [{"role": "user", "content": "summary"}]  # a compaction
    assert sizes.chars(messages) // 4 + 1 == estimate_tokens(messages)
    assert sizes.chars(messages[:1]) // 4 + 1 == estimate_tokens(messages[:1])


async def test_a_step_serialises_only_what_it_appended(make_session: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    h = make_session(context_window=1_000_000, files={"a.txt": "alpha\n" * 200})
    h.script(*[Reply(tool_calls=[call("read_file", file_path="a.txt")]) for _ in range(STEPS)], Reply(text="done"))
    serialised, built = [0], [0]
    schema_of = toolset.schema_of

    def counting_dumps(value: Any, **kwargs: Any) -> str:
        text = json.dumps(value, **kwargs)
        serialised[0] += len(text)
        return text

    def counting_schema_of(tool: Any) -> dict[str, Any]:
        built[0] += 1
        return schema_of(tool)

    monkeypatch.setattr(compaction, "json", SimpleNamespace(dumps=counting_dumps))
    monkeypatch.setattr(toolset, "schema_of", counting_schema_of)
    complete = await h.run("read it again and again")
    monkeypatch.undo()
    assert complete.completion_reason == "answered" and complete.iterations == STEPS + 1
    conversation = len(json.dumps(h.session.messages[1:], ensure_ascii=False))
    # each message once, plus the system prompt per step (the old estimate: the whole conversation per step)
    system = len(json.dumps(h.session.messages[0], ensure_ascii=False))
    assert serialised[0] <= conversation + 2 * (STEPS + 1) * system
    assert built[0] == len(h.session.agent.offered())  # one build for the whole run
