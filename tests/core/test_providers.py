"""The core scenarios through litellm's Anthropic, Ollama, Gemini and Responses adapters, not only the
OpenAI wire format.

Each test runs the real loop against a scripted server speaking the provider's own protocol on
loopback (tests/fake_anthropic.py: Messages API, `tool_use` blocks streamed as `input_json_delta`;
tests/fake_ollama.py: /api/chat NDJSON with whole tool calls; tests/fake_gemini.py:
streamGenerateContent with `functionCall` parts; tests/fake_responses.py: the Responses API that
litellm uses for `openai/gpt-5-codex`), through `anthropic/...`, `ollama_chat/...`, `gemini/...`
and `openai/gpt-5-codex` model strings with api_base, as users run them. The Ollama, Gemini and
Responses servers refuse what their real APIs refuse.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent.approval import Decision
from tests.fake_anthropic import FakeAnthropic
from tests.fake_gemini import FakeGemini
from tests.fake_ollama import FakeOllama
from tests.fake_responses import FakeResponses
from tests.fakellm import Reply, ScriptedServer, call

PROVIDERS = {"anthropic": FakeAnthropic, "ollama": FakeOllama, "gemini": FakeGemini, "responses": FakeResponses}


@pytest.fixture(params=sorted(PROVIDERS))
def fake_llm(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    """Overrides the OpenAI server of tests/conftest.py: `make_harness` talks to this one."""
    with PROVIDERS[request.param]() as server:
        yield server


def sent_tool_results(server: ScriptedServer, request: int = -1) -> list[str]:
    """The tool results the loop sent back, in the provider's own request format."""
    body = server.requests[request]
    if isinstance(server, FakeAnthropic):  # tool_result blocks inside user messages
        return [str(block["content"]) for m in body["messages"] if isinstance(m["content"], list)
                for block in m["content"] if block.get("type") == "tool_result"]
    if isinstance(server, FakeGemini):  # function_response parts
        return [json.dumps(p["function_response"]["response"]) for c in body["contents"] for p in c["parts"]
                if "function_response" in p]
    if isinstance(server, FakeResponses):  # function_call_output items
        return [json.dumps(i["output"]) for i in body["input"] if i.get("type") == "function_call_output"]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def sent_tool_calls(server: ScriptedServer, request: int = -1) -> list[tuple[str, dict[str, Any]]]:
    """The assistant's earlier tool calls as the provider received them back: (name, input)."""
    body = server.requests[request]
    if isinstance(server, FakeGemini):
        return [(p["function_call"]["name"], p["function_call"]["args"]) for c in body["contents"]
                for p in c["parts"] if "function_call" in p]
    if isinstance(server, FakeResponses):
        return [(i["name"], json.loads(i["arguments"])) for i in body["input"] if i.get("type") == "function_call"]
    calls = []
    for message in body["messages"]:
        if message["role"] != "assistant":
            continue
        if isinstance(server, FakeAnthropic):
            calls += [(b["name"], b["input"]) for b in message["content"] if b.get("type") == "tool_use"]
        else:  # Chat Completions (Ollama's OpenAI-compatible endpoint too): the arguments as a JSON string
            calls += [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                      for c in message.get("tool_calls", [])]
    return calls


async def test_an_edit_with_approval(make_harness: Any) -> None:
    h = make_harness(mode="ask", decisions=[Decision("allow_once")], files={"app.py": "x = 1\ny = 2\n"})
    h.script(Reply(text="I will change x.", chunk_size=4,
                   tool_calls=[call("replace_lines", file_path="app.py", start_line=1, end_line=1,
                                    new_content="x = 42")]),
             Reply(text="Changed x to 42."))
    complete = await h.run("set x to 42")
    assert (complete.success, complete.final_response) == (True, "Changed x to 42.")
    assert h.read("app.py") == "x = 42\ny = 2\n"
    approval = h.of("approval_required")[0]
    assert approval.tool == "replace_lines" and "+x = 42" in approval.files[0].diff
    assert "".join(e.text for e in h.of("text_delta")).startswith("I will change x.")
    # The call went back to the provider in its own format, with the arguments it sent.
    assert sent_tool_calls(h.llm) == [("replace_lines", {"file_path": "app.py", "start_line": 1, "end_line": 1,
                                                         "new_content": "x = 42"})]
    assert any("replaced lines 1-1" in r or "app.py" in r for r in sent_tool_results(h.llm))
    usage = h.of("usage")
    assert len(usage) == 2 and all(u.prompt_tokens > 0 and u.completion_tokens > 0 for u in usage)


async def test_a_shell_command(make_harness: Any) -> None:
    h = make_harness(mode="ask", decisions=[Decision("allow_once")])
    h.script(Reply(tool_calls=[call("bash_exec", command="echo provider-$((6 * 7))")]), Reply(text="It printed 42."))
    complete = await h.run("run the command")
    assert complete.final_response == "It printed 42."
    assert h.of("approval_required")[0].command == "echo provider-$((6 * 7))"
    result = h.of("tool_result")[0]
    assert result.ok and "provider-42" in (result.output or "")
    assert any("provider-42" in r for r in sent_tool_results(h.llm))


async def test_several_calls_in_one_answer_keep_their_order_and_ids(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "alpha\n", "b.txt": "beta\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt"), call("read_file", file_path="b.txt")]),
             Reply(text="read both"))
    assert (await h.run()).final_response == "read both"
    results = sent_tool_results(h.llm)
    assert len(results) == 2 and "alpha" in results[0] and "beta" in results[1]
    ids = [e.call_id for e in h.of("tool_call")]
    assert len(set(ids)) == 2 and all(ids)


async def test_resume_a_session(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "first\n"})
    h.script(Reply(text="Reading.", tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="It says first."))
    await h.run("what does a.txt say?")
    session_id = h.session.session_id
    await h.session.close()
    h2 = make_harness(resume=session_id)
    h2.script(Reply(text="Still first."))
    assert (await h2.run("and now?")).final_response == "Still first."
    body = h.llm.requests[-1]
    # The resumed conversation reaches the provider whole: prompt, call, result, answer, new prompt.
    assert sent_tool_calls(h.llm) == [("read_file", {"file_path": "a.txt"})]
    assert any("first" in r for r in sent_tool_results(h.llm))
    texts = json.dumps(body.get("messages") or body.get("contents") or body.get("input"))
    assert "what does a.txt say?" in texts and "It says first." in texts and "and now?" in texts
    assert h2.session.totals.prompt_tokens > 0


async def test_a_malformed_call_goes_back_as_an_error(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", start_line=1)]), Reply(text="fixed"))
    assert (await h.run()).final_response == "fixed"
    assert "`file_path` is required" in h.of("tool_result")[0].error
    assert any("file_path" in r for r in sent_tool_results(h.llm))


async def test_arguments_that_are_not_json_go_back_as_an_error(make_harness: Any, fake_llm: ScriptedServer) -> None:
    if isinstance(fake_llm, FakeGemini):
        pytest.skip("Gemini's functionCall.args is a JSON object on the wire: it cannot be malformed")
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", '{"file_path": "a.txt"')]), Reply(text="sorry"))
    assert (await h.run()).final_response == "sorry"
    assert "not valid JSON" in h.of("tool_result")[0].error
    assert any("not valid JSON" in r for r in sent_tool_results(h.llm))
