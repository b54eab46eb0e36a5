"""The loop: completion, malformed calls, limits, retries, provider errors, stopping, approvals."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from agent.approval import Decision
from tests.fakellm import Reply, call


def texts(h: Any) -> str:
    return "".join(e.text for e in h.of("text_delta"))


async def test_a_real_tool_call_goes_through_litellm(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "hello\n"})
    h.script(Reply(text="Reading.", tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="It says hello."))
    complete = await h.run("what does a.txt say?")
    assert (complete.success, complete.completion_reason, complete.iterations) == (True, "answered", 2)
    assert complete.final_response == "It says hello."
    first, second = h.llm.requests
    assert first["stream"] is True
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"read_file", "replace_lines", "bash_exec", "todo_write"} <= names
    schema = next(t for t in first["tools"] if t["function"]["name"] == "replace_lines")["function"]["parameters"]
    assert schema["required"] == ["file_path", "start_line", "end_line", "new_content"]
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and "     1\thello" in tool_msg["content"]
    assert h.types()[:4] == ["run_started", "step_started", "text_delta", "usage"]


async def test_completion_markers_end_the_run_and_never_show(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(text="Done reading. <task_complete> Bye", chunk_size=3,
                   tool_calls=[call("read_file", file_path="a.txt")]))
    complete = await h.run()
    assert complete.completion_reason == "answered" and complete.iterations == 1
    assert "task_complete" not in texts(h).lower() and texts(h) == "Done reading.  Bye"
    assert complete.final_response == "Done reading.  Bye"
    assert h.of("tool_result")[0].ok  # the tools of the final turn still ran


async def test_malformed_calls_go_back_as_precise_errors(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(
        Reply(tool_calls=[call("no_such_tool", path="x")]),
        Reply(tool_calls=[call("read_file", '{"file_path": "a.txt"')]),
        Reply(tool_calls=[call("read_file", start_line="first")]),
        Reply(text="giving up"),
    )
    complete = await h.run()
    assert complete.completion_reason == "error"
    assert "3 malformed tool calls in a row" in complete.final_response
    errors = [e.error for e in h.of("tool_result")]
    assert errors[0].startswith("unknown tool 'no_such_tool'. Available tools: read_file")
    assert "not valid JSON" in errors[1] and "read_file expects: file_path (string, required)" in errors[1]
    assert "`file_path` is required" in errors[2] and "`start_line`: Input should be a valid integer" in errors[2]
    assert h.llm.remaining == 1  # the run ended before asking the model again


async def test_a_good_call_resets_the_malformed_count(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    bad = Reply(tool_calls=[call("nope")])
    h.script(bad, bad, Reply(tool_calls=[call("read_file", file_path="a.txt")]), bad, bad, Reply(text="ok"))
    assert (await h.run()).completion_reason == "answered"


async def test_max_steps(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"}, max_steps=2)
    h.script(*[Reply(text="again", tool_calls=[call("read_file", file_path="a.txt")])] * 3)
    complete = await h.run()
    assert (complete.success, complete.completion_reason, complete.iterations) == (False, "max_steps", 2)
    assert "step limit" in complete.final_response


async def test_retries_rate_limits_5xx_timeouts_and_dropped_streams(make_harness: Any) -> None:
    h = make_harness(timeout=1.0)
    h.script(Reply(status=429, error_message="slow down", headers={"Retry-After": "0.05"}),
             Reply(status=503, error_message="overloaded"),
             Reply(text="answer"))
    complete = await h.run()
    assert complete.final_response == "answer"
    retries = h.of("retrying")
    assert [r.attempt for r in retries] == [1, 2]
    assert retries[0].why == "rate limited by the OpenAI-compatible server: slow down; waiting the 0.05 s it asks for"
    assert retries[0].delay == 0.05
    h.events.clear()
    h.script(Reply(text="partial", stall_after=2), Reply(text="whole", drop_after=1), Reply(text="finally"))
    complete = await h.run()
    assert complete.final_response == "finally"
    why = [r.why for r in h.of("retrying")]
    assert len(why) == 2 and why[0].startswith(("the stream broke off", "timed out", "the model sent nothing"))


async def test_retries_give_up_with_an_error(make_harness: Any) -> None:
    h = make_harness()
    h.script(*[Reply(status=500, error_message="boom")] * 3)
    complete = await h.run()
    assert complete.completion_reason == "error" and "gave up after 3 attempts" in complete.final_response
    assert h.of("error")[0].recoverable is False


async def test_auth_errors_are_not_retried_and_name_the_variable(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(status=401, error_message="Incorrect API key provided"))
    complete = await h.run()
    assert complete.completion_reason == "error" and not h.of("retrying")
    assert "set OPENAI_API_KEY or CODER_TUI_API_KEY, or pass --api-key" in complete.final_response


async def test_context_window_overflow_is_a_clear_message(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(status=400, error_code="context_length_exceeded",
                   error_message="This model's maximum context length is 8192 tokens."))
    complete = await h.run()
    assert complete.completion_reason == "error" and "context window" in complete.final_response


async def test_stop_mid_stream_is_prompt(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(text="word " * 400, chunk_size=5, chunk_delay=0.02))
    task = asyncio.create_task(h.run())
    while not h.of("text_delta"):
        await asyncio.sleep(0.01)
    started = time.perf_counter()
    assert h.session.stop()
    complete = await task
    assert time.perf_counter() - started < 1.0
    assert complete.completion_reason == "stopped" and not complete.success
    assert h.of("complete")[-1].completion_reason == "stopped"
    h.script(Reply(text="still usable"))
    assert (await h.run()).final_response == "still usable"


async def test_stop_during_a_tool_kills_it_and_keeps_the_conversation_valid(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(tool_calls=[call("bash_exec", command="sleep 30; touch late.txt"),
                               call("bash_exec", command="touch never.txt")]))
    task = asyncio.create_task(h.run())
    while not h.of("tool_call"):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    h.session.stop()
    complete = await task
    assert complete.completion_reason == "stopped"
    assert h.of("tool_result")[0].error == "cancelled"
    assert not (h.root / "never.txt").exists()
    calls = [c["id"] for c in h.session.messages[-4]["tool_calls"]]
    answered = [m["tool_call_id"] for m in h.session.messages if m["role"] == "tool"]
    assert calls == answered[-2:]
    assert h.session.messages[-1]["role"] == "assistant"  # the stopped turn is marked as cut short


async def test_stop_decision_ends_the_run(make_harness: Any) -> None:
    h = make_harness(mode="ask", files={"a.txt": "a\n"}, decisions=[Decision("stop")])
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="b\n")]), Reply(text="never"))
    complete = await h.run()
    assert complete.completion_reason == "stopped" and h.read("a.txt") == "a\n"
    assert h.llm.remaining == 1


async def test_deny_feedback_reaches_the_model(make_harness: Any) -> None:
    h = make_harness(mode="ask", files={"a.txt": "a\n"}, decisions=[Decision("deny", feedback="use tabs")])
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="b\n")]), Reply(text="ok"))
    await h.run()
    tool_msg = h.llm.requests[-1]["messages"][-1]
    assert tool_msg["content"] == "Error: The user denied this write_file call. Their feedback: use tabs"


async def test_rejected_hunks_are_not_applied_and_the_model_is_told(make_harness: Any) -> None:
    original = "".join(f"line {i}\n" for i in range(1, 31))
    h = make_harness(mode="ask", files={"f.txt": original},
                     decisions=[Decision("allow_once", rejected_hunks={"f.txt": [1]})])
    new = original.replace("line 2\n", "LINE 2\n").replace("line 25\n", "LINE 25\n")
    h.script(Reply(tool_calls=[call("write_file", file_path="f.txt", content=new)]), Reply(text="ok"))
    await h.run()
    assert h.of("approval_required")[0].files[0].hunks == 2
    assert h.read("f.txt") == original.replace("line 2\n", "LINE 2\n")
    told = h.llm.requests[-1]["messages"][-1]["content"]
    assert "the user rejected hunk(s) 2 of 2; the rest was applied" in told
    assert h.of("approval_resolved")[0].rejected_hunks == {"f.txt": [1]}


async def test_edited_proposal_is_applied_and_the_model_is_told(make_harness: Any) -> None:
    h = make_harness(mode="ask", files={"f.txt": "a\n"},
                     decisions=[Decision("allow_once", edited={"f.txt": "user version\n"})])
    h.script(Reply(tool_calls=[call("write_file", file_path="f.txt", content="model version\n")]), Reply(text="ok"))
    await h.run()
    assert h.read("f.txt") == "user version\n"
    assert "the user edited the proposed content" in h.llm.requests[-1]["messages"][-1]["content"]
    assert h.of("file_changed")[0].diff.endswith("+user version\n")


async def test_approval_shows_the_dry_run_diff_of_every_file(make_harness: Any) -> None:
    h = make_harness(mode="ask", files={"a.txt": "a\n", "b.txt": "b\n"}, decisions=[Decision("deny")])
    edits = [{"file_path": p, "patches": [{"old_text": t, "new_text": t.upper()}]} for p, t in (("a.txt", "a"), ("b.txt", "b"))]
    h.script(Reply(tool_calls=[call("multi_edit", edits=edits)]), Reply(text="ok"))
    await h.run()
    event = h.of("approval_required")[0]
    assert event.kind == "edit" and [f.path for f in event.files] == ["a.txt", "b.txt"]
    assert event.files[1].diff == "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
    json.loads(event.model_dump_json())


async def test_system_prompt_has_mode_workspace_facts_and_agents_md(make_harness: Any) -> None:
    h = make_harness(mode="plan", files={"AGENTS.md": "Always write tests first.\n"})
    h.script(Reply(text="ok"))
    await h.run()
    system = h.llm.requests[0]["messages"][0]["content"]
    assert "## Mode: PLAN" in system and "only read" in system
    assert str(h.root) in system and "Always write tests first." in system


async def test_slow_first_byte_times_out_and_is_retried(make_harness: Any) -> None:
    h = make_harness(timeout=0.5)
    h.script(Reply(text="late", delay=1.5), Reply(text="on time"))
    complete = await h.run()
    assert complete.final_response == "on time"
    assert h.of("retrying")[0].why.startswith(("timed out", "connection error"))


async def test_connection_check_uses_a_plain_request(fake_llm: Any) -> None:
    from agent.llm import LLM, LLMError

    fake_llm.script(Reply(text="OK"), Reply(status=401, error_message="nope"))
    llm = LLM(fake_llm.model, fake_llm.url, "sk-test-check-000000", key_variable="OPENAI_API_KEY", reasoning="high")
    assert await llm.check() == "OK"
    sent = fake_llm.requests[0]  # one small request: no tools, no reasoning, a few tokens
    assert "tools" not in sent and "reasoning_effort" not in sent and sent["max_tokens"] <= 16
    try:
        await llm.check()
    except LLMError as exc:
        assert "authentication failed" in str(exc) and "OPENAI_API_KEY" in str(exc)
    else:
        raise AssertionError("expected an authentication error")
