"""Messy model outputs, through litellm's real request path: cut-off calls, almost-JSON arguments,
wrong names, calls written in the text, empty replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from agent.approval import Decision, ScriptedApprover
from agent.config import Config
from tests.conftest import TEST_KEY, open_harness
from tests.fakellm import FakeLLM, Reply, call

EDIT = '{"file_path": "a.txt", "start_line": 1, "end_line": 1, "new_content": "a very long repl'


def texts(h: Any) -> str:
    return "".join(e.text for e in h.of("text_delta"))


def tool_messages(h: Any) -> list[str]:
    return [m["content"] for m in h.session.messages if m["role"] == "tool"]


async def test_a_call_cut_off_by_the_token_limit_is_not_run_and_the_turn_goes_on(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "old\n"})
    h.script(Reply(tool_calls=[call("replace_lines", EDIT)], finish_reason="length", usage=(50, 4096)),
             Reply(tool_calls=[call("replace_lines", file_path="a.txt", start_line=1, end_line=1,
                                    new_content="new")]),
             Reply(text="Done in a smaller step."))
    complete = await h.run("rewrite a.txt")
    assert (complete.success, complete.final_response) == (True, "Done in a smaller step.")
    assert h.read("a.txt") == "new\n"
    told = h.llm.requests[1]["messages"][-1]
    assert told["role"] == "tool" and "cut off by the output token limit (4096 tokens)" in told["content"]
    assert "while you were writing replace_lines" in told["content"] and "smaller steps" in told["content"]
    assert [e.tool for e in h.of("tool_call")] == ["replace_lines"]  # only the whole call was shown and run
    assert "cut off by the output token limit" in h.of("warning")[0].message
    # the cut-off call goes back with arguments a strict adapter accepts
    assert h.llm.requests[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"] == "{}"


async def test_a_cut_off_reply_raises_the_output_limit_when_the_model_allows_more(fake_llm: FakeLLM,
                                                                                tmp_path: Path) -> None:
    config = Config(model="openai/gpt-4o", api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode="allow",
                    max_retries=0)  # type: ignore[arg-type]  # litellm knows gpt-4o writes up to 16384 tokens
    h = open_harness(fake_llm, tmp_path / "ws", {"a.txt": "old\n"}, config, ScriptedApprover([]))
    h.script(Reply(tool_calls=[call("write_file", EDIT)], finish_reason="length", usage=(50, 4096)),
             Reply(text="ok"))
    try:
        complete = await h.run("rewrite a.txt")
    finally:
        await h.session.close()
    assert complete.final_response == "ok"
    assert "max_tokens" not in h.llm.requests[0] and h.llm.requests[1]["max_tokens"] == 16384
    assert "The output limit is now raised to 16384 tokens." in h.llm.requests[1]["messages"][-1]["content"]


async def test_cut_off_calls_three_times_in_a_row_end_the_run(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "old\n"})
    h.script(*[Reply(tool_calls=[call("write_file", EDIT)], finish_reason="length")] * 3, Reply(text="never"))
    complete = await h.run()
    assert complete.completion_reason == "error" and "cut off by the output token limit 3 times" in \
        complete.final_response
    assert h.read("a.txt") == "old\n" and not h.of("tool_call") and h.llm.remaining == 1


async def test_almost_json_arguments_are_repaired(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n", "b.txt": "y\n", "c.txt": "z\n"})
    h.script(Reply(tool_calls=[call("read_file", '{"file_path": "a.txt",}'),
                               call("read_file", "{file_path: 'b.txt'}"),
                               call("read_file", "{'file_path': 'c.txt'}")]),
             Reply(text="read them"))
    complete = await h.run()
    assert complete.final_response == "read them"
    assert all(e.ok for e in h.of("tool_result")) and len(h.of("tool_result")) == 3
    assert [e.args["file_path"] for e in h.of("tool_call")] == ["a.txt", "b.txt", "c.txt"]
    sent = [json.loads(c["function"]["arguments"]) for c in h.llm.requests[1]["messages"][-4]["tool_calls"]]
    assert [a["file_path"] for a in sent] == ["a.txt", "b.txt", "c.txt"]  # history holds the repaired calls


async def test_ambiguous_json_gets_a_precise_error(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", '{"file_path": "a.txt", "start_line": }'),
                               call("read_file", '{"file_path": "a.txt", "start_line": 3')]),
             Reply(text="ok"))
    await h.run()
    missing, cut = [e.error for e in h.of("tool_result")]
    assert "Expecting value at line 1 column 38 (character 37)" in missing
    assert 'near: "…path\\": \\"a.txt\\", \\"start_line\\": ⟨here⟩}"' in missing
    assert "before the JSON was complete (cut off?)" in cut and "read_file expects: file_path" in cut


async def test_wrong_parameter_names_and_unknown_tools_are_answered_with_the_real_ones(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", filepath="a.txt"), call("read_fil", file_path="a.txt")]),
             Reply(text="ok"))
    await h.run()
    wrong, unknown = [e.error for e in h.of("tool_result")]
    assert "`filepath` is not a parameter of this tool (did you mean `file_path`?)" in wrong
    assert "read_file expects: file_path (string, required)" in wrong
    assert unknown.startswith("unknown tool 'read_fil'. Available tools: read_file") and "write_file" in unknown


async def test_hermes_tool_call_tags_run_through_the_approvals(make_harness: Any) -> None:
    h = make_harness(mode="ask", files={"a.txt": "old\n"}, decisions=[Decision("allow_once")])
    body = {"name": "write_file", "arguments": {"file_path": "a.txt", "content": "new\n"}}
    h.script(Reply(text=f"I will write it.\n<tool_call>\n{json.dumps(body)}\n</tool_call>", chunk_size=4),
             Reply(text="Written."))
    complete = await h.run()
    assert complete.final_response == "Written." and h.read("a.txt") == "new\n"
    assert [e.tool for e in h.of("approval_required")] == ["write_file"]
    assert "<tool_call>" not in texts(h) and texts(h).startswith("I will write it.")
    assistant = h.llm.requests[1]["messages"][-2]
    assert assistant["content"] == "I will write it." and assistant["tool_calls"][0]["function"]["name"] == "write_file"
    assert h.llm.requests[1]["messages"][-1]["role"] == "tool"


async def test_a_lone_fenced_json_call_is_run(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "hello\n"})
    fenced = '```json\n{"name": "read_file", "arguments": {"file_path": "a.txt"}}\n```'
    h.script(Reply(text=fenced, chunk_size=5), Reply(text="It says hello."))
    complete = await h.run()
    assert complete.final_response == "It says hello." and h.of("tool_result")[0].ok
    assert "```" not in texts(h)


async def test_text_calls_of_unknown_tools_or_beside_structured_calls_stay_text(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "hello\n"})
    unknown = '<tool_call>{"name": "launch_rockets", "arguments": {}}</tool_call>'
    example = 'Example:\n```json\n{"name": "write_file", "arguments": {"file_path": "a.txt", "content": ""}}\n```'
    h.script(Reply(text=unknown), Reply(text=example, tool_calls=[call("read_file", file_path="a.txt")]),
             Reply(text="done"))
    first = await h.run()
    assert first.final_response == unknown and not h.of("tool_call") and texts(h) == unknown
    h.events.clear()
    await h.run()
    assert [e.tool for e in h.of("tool_call")] == ["read_file"] and h.read("a.txt") == "hello\n"
    assert "```json" in texts(h)  # held back while it streamed, shown once it was not taken as a call


async def test_an_empty_reply_is_asked_for_again_once(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(text=""), Reply(text="here it is"))
    complete = await h.run()
    assert complete.final_response == "here it is" and len(h.llm.requests) == 2
    assert h.of("retrying")[0].why == "the model sent an empty reply"
    assert [m["role"] for m in h.session.messages[-2:]] == ["user", "assistant"]  # no empty turn recorded


async def test_two_empty_replies_are_reported_in_one_line(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(text=""), Reply(text=""), Reply(text="later"))
    complete = await h.run()
    assert complete.completion_reason == "error" and "\n" not in complete.final_response
    assert complete.final_response.startswith("openai/fake-model (the OpenAI-compatible server) sent an empty reply "
                                              "twice (no text, no tool calls): send the message again")
    assert (await h.run("again")).final_response == "later"


async def test_a_filtered_reply_keeps_what_was_said_and_an_empty_one_leaves_no_turn(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(text="Here is the first half", finish_reason="content_filter"),
             Reply(text="", finish_reason="content_filter"), Reply(text="fine"))
    first = await h.run("one")
    assert first.completion_reason == "error" and "content filter stopped" in first.final_response
    assert h.session.messages[-1] == {"role": "assistant", "content": "Here is the first half"}
    second = await h.run("two")
    assert second.completion_reason == "error" and h.session.messages[-1] == {"role": "user", "content": "two"}
    assert (await h.run("three")).final_response == "fine"
    assert [m["role"] for m in h.llm.requests[-1]["messages"][1:]] == ["user", "assistant", "user", "user"]
