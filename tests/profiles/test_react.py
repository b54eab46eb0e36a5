"""ReAct: the THOUGHT / ACTION text protocol, parsed robustly, with the same approvals; used
automatically for models litellm says cannot call tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.approval import Decision
from agent.react import parse
from tests.fakellm import Reply


def action(tool: str, args: dict[str, Any], thought: str = "I should look.") -> Reply:
    return Reply(text=f"THOUGHT: {thought}\nACTION: {tool}\nACTION_INPUT: {json.dumps(args)}")


async def test_a_react_run_edits_a_file_through_approvals(make_session: Any) -> None:
    h = make_session(mode="ask", tool_calling="text", files={"app.py": "x = 1\n"},
                     decisions=[Decision("deny", feedback="use 3"), Decision("allow_once")])
    h.script(action("read_file", {"file_path": "app.py"}),
             action("patch_file", {"file_path": "app.py", "patches": [{"old_text": "x = 1", "new_text": "x = 2"}]}),
             Reply(text="Thought: the user wants 3.\n**Action:** patch_file\n**Action Input:**\n```json\n"
                        '{"file_path": "app.py", "patches": [{"old_text": "x = 1", "new_text": "x = 3"}]}\n```\n'
                        "OBSERVATION: (imagined) done"),
             Reply(text="THOUGHT: done.\nFINAL ANSWER: x is now 3."))
    complete = await h.run("set x")
    assert (complete.completion_reason, complete.final_response) == ("answered", "x is now 3.")
    assert h.read("app.py") == "x = 3\n"
    assert [r.tool for r in h.approver.requests] == ["patch_file", "patch_file"]
    assert [e.decision for e in h.of("approval_resolved")] == ["deny", "allow_once"]
    first, second, third, _ = h.llm.requests
    assert "tools" not in first and "ACTION_INPUT:" in first["messages"][0]["content"]
    assert "- patch_file:" in first["messages"][0]["content"]
    # seed 003: the registry's examples teach a text-protocol model the argument shapes
    assert 'example: ACTION_INPUT: {"file_path": "src/util.py", "patches": [{"old_text"' in first["messages"][0]["content"]
    assert all(m["role"] in ("system", "user", "assistant") for m in third["messages"])
    observed = second["messages"][-1]["content"]
    assert observed.startswith("OBSERVATION (read_file):") and "x = 1" in observed
    assert "The user denied this patch_file call. Their feedback: use 3" in third["messages"][-1]["content"]


async def test_models_without_tool_calling_get_the_text_protocol_automatically(make_session: Any) -> None:
    # litellm's model table knows deepseek-reasoner and says it has no function calling
    h = make_session(model="deepseek/deepseek-reasoner", files={"a.txt": "hello\n"})
    h.script(action("read_file", {"file_path": "a.txt"}), Reply(text="It says hello."))
    complete = await h.run("what does a.txt say?")
    assert complete.final_response == "It says hello."
    first, second = h.llm.requests
    assert "tools" not in first and "OBSERVATION (read_file):" in json.dumps(second["messages"])


async def test_malformed_actions_are_told_precisely(make_session: Any) -> None:
    h = make_session(tool_calling="text", files={"a.txt": "x\n"})
    h.script(Reply(text="ACTION: read_file\nACTION_INPUT: a.txt"),
             Reply(text="ACTION: no_such_tool\nACTION_INPUT: {}"),
             Reply(text="FINAL ANSWER: giving up"))
    complete = await h.run()
    assert complete.final_response == "giving up"
    errors = [e.error for e in h.of("tool_result")]
    assert "not valid JSON" in errors[0] and "read_file expects: file_path (string, required)" in errors[0]
    assert errors[1].startswith("unknown tool 'no_such_tool'")


@pytest.mark.parametrize(("text", "tool", "args", "answer"), [
    ('THOUGHT: x\nACTION: read_file\nACTION_INPUT: {"file_path": "a"}', "read_file", {"file_path": "a"}, ""),
    ('Thought: x\naction: read_file {"file_path": "a"} and more', "read_file", {"file_path": "a"}, ""),
    ('## Action: list_dir\n### Action Input: none', "list_dir", {}, ""),
    ('THOUGHT: done\nFINAL ANSWER: all good\nACTION: read_file', None, None, "all good"),
    ('Just an answer.', None, None, "Just an answer."),
    ('THOUGHT: nothing to do\nThe answer is 4.', None, None, "nothing to do\nThe answer is 4."),
])
def test_parsing_forgives_common_variations(text: str, tool: str | None, args: Any, answer: str) -> None:
    step = parse(text)
    assert step.action == tool and step.answer == answer
    if args is not None:
        assert json.loads(step.arguments) == args


@pytest.mark.parametrize(("model", "calling", "kind"), [
    ("ollama_chat/qwen2.5-coder", "auto", "iterative"),  # litellm's Ollama info answers "no" for any model
    ("ollama/llama3", "auto", "iterative"),
    ("ollama_chat/codegeex4:latest", "auto", "react"),  # litellm's table says it has no tool calling
    ("ollama_chat/qwen2.5-coder", "text", "react"),
    ("deepseek/deepseek-reasoner", "native", "iterative"),
    ("deepseek/deepseek-reasoner", "auto", "react"),  # the table says it has no tool calling
    ("openai/o1-mini", "auto", "iterative"),  # not in the table: native calls (only a positive "no" counts)
    ("openai/responses/o4-mini", "auto", "iterative"),  # the table's o4-mini, under the Responses route
])
async def test_the_protocol_follows_what_litellm_positively_knows(make_session: Any, model: str, calling: str,
                                                                  kind: str) -> None:
    h = make_session(tool_calling=calling)
    assert await h.session.agent.agent_type(model) == kind
