"""The strict test servers refuse what their real APIs refuse, and the requests our LLM sends (through
the built-in clients, and litellm for Gemini) are fitted so that they accept them
(agent/llm/toolschema.py): tool names mapped back, call ids of another provider rewritten the same
in the call and its result, Gemini schemas.
"""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from agent.llm import LLM, LLMError
from agent.llm.litellm_client import ensure_loaded
from tests.conftest import TEST_KEY, cli, cli_env, write_files
from tests.fake_gemini import FakeGemini
from tests.fake_mistral import FakeMistral
from tests.fake_ollama import FakeOllama
from tests.fake_responses import FakeResponses, Reasoned
from tests.fakellm import FakeLLM, Reply, call

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def tool(name: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": f"the {name} tool",
                                             "parameters": parameters or SCHEMA}}


def turn(call_id: str, name: str = "read_file") -> list[dict[str, Any]]:
    """An assistant tool call and its answer."""
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function",
                             "function": {"name": name, "arguments": '{"path": "a.py"}'}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "x = 1"}]


USER = [{"role": "system", "content": "You help."}, {"role": "user", "content": "read a.py"}]


async def complete(server: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], model: str = "") -> Any:
    llm = LLM(model=model or server.model, api_base=server.url, api_key=TEST_KEY, max_retries=0)
    return await llm.complete(messages, tools, lambda _t: None, lambda *_a: None)


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json",
                                                                      **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read().splitlines()[0])
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini() as server:
        yield server


# -- OpenAI Chat Completions -------------------------------------------------------------------
async def test_openai_refuses_an_unanswered_tool_call_with_its_own_error(fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="never sent"))
    unanswered = [*USER, turn("call_1")[0], {"role": "user", "content": "and?"}]
    with pytest.raises(LLMError, match="did not have response messages: call_1"):
        await complete(fake_llm, unanswered, [tool("read_file")])
    assert fake_llm.remaining == 1 and fake_llm.requests == []  # refused before any script
    assert fake_llm.rejected[0][1].param == "messages.[2].role"


async def test_openai_refuses_bad_names_long_ids_and_too_many_tools_through_litellm(fake_llm: FakeLLM) -> None:
    litellm = await ensure_loaded()
    args = {"model": fake_llm.model, "api_base": fake_llm.url, "api_key": TEST_KEY, "num_retries": 0}
    cases = [([*USER], [tool("files.read")], "string does not match pattern"),
             ([*USER], [tool(f"t{i}") for i in range(129)], "array too long. Expected an array with maximum length 128"),
             ([*USER, *turn("toolu_" + "x" * 40)], [tool("read_file")], "maximum length 40, but got a string with length 46"),
             ([*USER, {"role": "tool", "tool_call_id": "call_9", "content": "?"}], [tool("read_file")],
              "must be a response to a preceeding message with 'tool_calls'"),
             ([*USER], [tool("read_file", {"type": "string"})], 'schema must be a JSON Schema of \'type: "object"\'')]
    for messages, tools, said in cases:
        with pytest.raises(litellm.BadRequestError, match=re.escape(said)):
            await litellm.acompletion(messages=messages, tools=tools, **args)
    assert all(problem.code != "scripted" for _, problem in fake_llm.rejected) and len(fake_llm.rejected) == 5


async def test_a_tool_name_no_provider_takes_is_sent_fitted_and_mapped_back(fake_llm: FakeLLM) -> None:
    long_name = "server.tools.read_a_file_with_a_name_that_goes_well_past_sixty_four_characters"
    fake_llm.script(Reply(tool_calls=[call("files_read", path="b.py")]))
    reply = await complete(fake_llm, [*USER, *turn("call_1", "files.read")], [tool("files.read"), tool(long_name)])
    assert [c.name for c in reply.tool_calls] == ["files.read"]  # the name our tool has
    sent = fake_llm.requests[0]
    names = [t["function"]["name"] for t in sent["tools"]]
    assert names[0] == "files_read" and len(names[1]) == 64 and names[1].startswith("server_tools_read_a_file")
    assert sent["messages"][2]["tool_calls"][0]["function"]["name"] == "files_read"  # the history, too


async def test_a_foreign_call_id_is_rewritten_the_same_in_the_call_and_its_result(fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="ok"))
    foreign = "toolu_01A09q90qw90lq917835lq9.gemini/call:" + "7" * 20
    await complete(fake_llm, [*USER, *turn(foreign), {"role": "user", "content": "again"}], [tool("read_file")])
    sent = fake_llm.requests[0]["messages"]
    call_id = sent[2]["tool_calls"][0]["id"]
    assert call_id == sent[3]["tool_call_id"] != foreign
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", call_id)
    assert fake_llm.rejected == []


async def test_mistral_gets_nine_character_ids_for_calls_made_by_another_provider() -> None:
    with FakeMistral(Reply(tool_calls=[call("read_file", path="b.py")]), Reply(text="done")) as server:
        history = [*USER, *turn("call_1"), *turn("toolu_01A09q90qw90lq917835lq9")]
        reply = await complete(server, history, [tool("read_file")])
        sent = server.requests[0]["messages"]
        ids = [sent[2]["tool_calls"][0]["id"], sent[3]["tool_call_id"], sent[4]["tool_calls"][0]["id"],
               sent[5]["tool_call_id"]]
        assert ids[0] == ids[1] != ids[2] == ids[3] and all(re.fullmatch(r"[a-zA-Z0-9]{9}", i) for i in ids)
        # Mistral's own ids come back unchanged and are sent back as they are.
        history += [{"role": "assistant", "content": None, "tool_calls": [
            {"id": reply.tool_calls[0].id, "type": "function", "function": {"name": "read_file",
                                                                           "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "y"}]
        await complete(server, history, [tool("read_file")])
        assert server.requests[1]["messages"][6]["tool_calls"][0]["id"] == reply.tool_calls[0].id
        assert server.rejected == []


async def test_mistral_refuses_foreign_ids_in_its_own_words() -> None:
    with FakeMistral() as server:
        status, body = post(f"{server.url}/chat/completions",
                            {"model": "mistral-large-latest", "messages": [*USER, *turn("call_1")]})
    assert status == 400 and body["message"] == "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9."


# -- Gemini --------------------------------------------------------------------------------------
def test_gemini_refuses_what_its_api_refuses(gemini: FakeGemini) -> None:
    url, key = f"{gemini.url}/models/gemini-2.5-flash:generateContent", {"x-goog-api-key": "k"}
    user = {"role": "user", "parts": [{"text": "hi"}]}
    asked = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
    answer = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}

    def declared(parameters: dict[str, Any], name: str = "f") -> dict[str, Any]:
        return {"contents": [user], "tools": [{"functionDeclarations": [{"name": name, "parameters": parameters}]}]}

    cases = [({"contents": [user, asked, user]}, "function response turn comes immediately after a function call"),
             ({"contents": [user, answer]}, "function response turn comes immediately after a function call"),
             ({"contents": [user, asked, {"role": "user", "parts": [answer["parts"][0]] * 2}]},
              "number of function response parts is equal to the number of function call parts"),
             ({"contents": [user, {"role": "model", "parts": [{"text": "a"}]}, asked, answer]},
              "function call turn comes immediately after a user turn"),
             ({"contents": [{"role": "assistant", "parts": [{"text": "a"}]}]}, "Please use a valid role: user, model."),
             (declared({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}),
              'Unknown name "additionalProperties" at \'tools[0].function_declarations[0].parameters\''),
             (declared({"type": "object", "$defs": {}}), 'Unknown name "$defs"'),
             (declared({"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}}),
              "only 'enum' and 'date-time' are supported for STRING type"),
             (declared({"type": "object", "properties": {}}), "should be non-empty for OBJECT type"),
             (declared({"type": "object"}, name="9lives"), "Invalid function name. Must start with a letter")]
    for body, said in cases:
        status, answer_body = post(url, body, key)
        assert (status, answer_body["error"]["status"]) == (400, "INVALID_ARGUMENT"), body
        assert said in answer_body["error"]["message"], (said, answer_body)
    assert post(url, {"contents": [user]})[0] == 403  # no key
    gemini.script(Reply(text="fine"))
    assert post(url, {"contents": [user, asked, answer]}, key)[0] == 200
    assert len(gemini.rejected) == len(cases) + 1


async def test_gemini_gets_const_as_an_enum_and_calls_come_back_under_our_names(gemini: FakeGemini) -> None:
    schema = {"type": "object", "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#",
              "properties": {"mode": {"const": "full"}, "path": {"type": "string"},
                             "const": {"type": "string"}}}  # a parameter named so stays one
    gemini.script(Reply(tool_calls=[call("files_read", path="a.py", mode="full")]))
    reply = await complete(gemini, USER, [tool("files.read", schema)])
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [("files.read", {"path": "a.py",
                                                                                             "mode": "full"})]
    declared = gemini.requests[0]["tools"][0]["function_declarations"][0]
    assert declared["parameters"]["properties"]["mode"] == {"type": "string", "enum": ["full"]}
    assert declared["parameters"]["properties"]["const"] == {"type": "string"}


# -- OpenAI Responses ------------------------------------------------------------------------
async def test_a_codex_model_goes_through_the_responses_api_with_its_reasoning_summary() -> None:
    litellm = await ensure_loaded()
    with FakeResponses(Reasoned(reasoning="First I look at the file.", text="It sets x.", chunk_size=5),
                       Reasoned(reasoning="Not asked for.", text="plain")) as server:
        args = {"model": server.model, "api_base": server.url, "api_key": TEST_KEY, "stream": True}
        stream = await litellm.acompletion(messages=USER, reasoning_effort="high", **args)
        reasoning, text = "", ""
        async for chunk in stream:
            delta = chunk.choices[0].delta if chunk.choices else None
            reasoning += getattr(delta, "reasoning_content", None) or ""
            text += getattr(delta, "content", None) or ""
        assert (reasoning, text) == ("First I look at the file.", "It sets x.")
        assert server.requests[0]["reasoning"] == {"effort": "high", "summary": "detailed"}
        reply = await complete(server, USER, [])  # no effort asked: no summary, as OpenAI does
        assert reply.text == "plain" and "reasoning" not in server.requests[1]


async def test_the_responses_api_refuses_an_unanswered_function_call() -> None:
    with FakeResponses() as server:
        items = [{"role": "user", "content": "hi"},
                 {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}]
        status, body = post(f"{server.url}/responses", {"model": "gpt-5-codex", "input": items})
        assert (status, body["error"]["message"]) == (400, "No tool output found for function call call_1.")
        items.append({"type": "function_call_output", "call_id": "call_2", "output": "x"})
        assert "No tool call found for function call output with call_id call_2" in post(
            f"{server.url}/responses", {"model": "gpt-5-codex", "input": items})[1]["error"]["message"]
        status, body = post(f"{server.url}/responses", {"model": "gpt-5-codex", "input": "hi",
                                                        "tools": [{"type": "function", "name": "a.b"}]})
        assert status == 400 and "string does not match pattern" in body["error"]["message"]


# -- Ollama ----------------------------------------------------------------------------------
def test_ollama_refuses_what_its_go_types_cannot_decode() -> None:
    with FakeOllama() as server:
        url, model = f"{server.url}/api/chat", "qwen2.5-coder"
        string_arguments = [{"role": "assistant", "content": "",
                             "tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]}]
        cases = [({"messages": USER}, 400, "model is required"),
                 ({"model": "llama3", "messages": USER}, 404, 'model "llama3" not found, try pulling it first'),
                 ({"model": model, "messages": string_arguments}, 400,
                  "cannot unmarshal string into Go struct field ChatRequest.messages.tool_calls.function.arguments"),
                 ({"model": model, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}, 400,
                  "cannot unmarshal array into Go struct field ChatRequest.messages.content of type string"),
                 ({"model": model, "messages": USER, "tools": [tool("f", {"type": "object", "required": "path"})]},
                  400, "cannot unmarshal string into Go struct field ChatRequest.tools.function.parameters.required")]
        for body, status, said in cases:
            got, answer = post(url, body)
            assert got == status and said in answer["error"], (said, answer)
        assert len(server.rejected) == len(cases)


async def test_ollama_accepts_what_the_built_in_client_sends_for_a_tool_turn() -> None:
    with FakeOllama(Reply(text="done")) as server:
        reply = await complete(server, [*USER, *turn("call_1")], [tool("read_file")])
        assert reply.text == "done" and server.rejected == []
        sent = server.requests[0]["messages"][2]["tool_calls"][0]["function"]["arguments"]
        assert json.loads(sent) == {"path": "a.py"}  # a JSON string on Ollama's OpenAI-compatible endpoint


def test_ollamas_openai_endpoint_refuses_what_ollama_refuses() -> None:
    with FakeOllama() as server:
        url, model = f"{server.url}/v1/chat/completions", "qwen2.5-coder"
        bad_call = [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]}]
        cases = [({"model": "llama3", "messages": USER}, 404, 'model "llama3" not found, try pulling it first'),
                 ({"model": model, "messages": bad_call}, 400, "invalid tool call arguments")]
        for body, status, said in cases:
            got, answer = post(url, body)
            assert got == status and said in answer["error"]["message"], (said, answer)


def test_run_with_a_codex_model_answers_through_the_responses_api(tmp_path: Any, isolated_home: Any) -> None:
    """`coder-tui run --model openai/gpt-5-codex` as a user runs it: a tool call and an answer through
    litellm's Responses bridge, and nothing on stderr (its usage mismatch warns at every reply)."""
    ws = write_files(tmp_path / "ws", {"a.txt": "alpha\n"})
    with FakeResponses(Reasoned(tool_calls=[call("read_file", file_path="a.txt")]),
                       Reasoned(text="It says alpha.")) as server:
        done = subprocess.run(cli("run", "what does a.txt say", "--workspace", str(ws), "--model", server.model,
                                  "--api-base", server.url, "--api-key", TEST_KEY, "--mode", "allow", "--json"),
                              env=cli_env(isolated_home), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "complete" and events[-1]["final_response"] == "It says alpha."
    assert "alpha" in json.dumps(server.requests[-1]["input"]) and server.rejected == []
    assert "Pydantic" not in done.stderr and "Warning" not in done.stderr, done.stderr


async def test_gemini_gets_its_thought_signatures_back_with_its_calls() -> None:
    """Gemini 3 signs each function call; the signature must come back with the call. litellm keeps
    it in the call's id (`...__thought__SIGNATURE`): an id rewritten to OpenAI's 40-character rule
    lost it, and Gemini 3 got litellm's stand-in instead (Gemini 2.5 nothing)."""
    with FakeGemini(Reply(tool_calls=[call("read_file", path="a.py")]), Reply(text="done")) as server:
        model = "gemini/gemini-3-pro-preview"
        first = await complete(server, USER, [tool("read_file")], model)
        history = [*USER, {"role": "assistant", "content": None, "tool_calls": [
            {"id": first.tool_calls[0].id, "type": "function",
             "function": {"name": "read_file", "arguments": first.tool_calls[0].arguments}}]},
                   {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "x = 1"}]
        assert (await complete(server, history, [tool("read_file")], model)).text == "done"
    assert server.rejected == [] and len(server.signatures_given) == 1
    assert server.signatures_back[-1] == server.signatures_given  # not litellm's stand-in
