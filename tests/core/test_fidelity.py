"""Provider fidelity defects found by validating what we send (issue 32), each through the real loop
against a strict scripted server: the thinking of Claude behind a LiteLLM proxy sent back, a model
named with the Responses route kept on native tool calls, and native calls taken even from a model
on the text protocol. (Gemini's thought signatures: tests/core/test_strict_servers.py; `--image`
with the Responses route: tests/media/test_images.py; more tools than OpenAI takes:
tests/core/test_tool_limit.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from agent.approval import ScriptedApprover
from agent.config import Config
from tests.conftest import TEST_KEY, Harness, open_harness
from tests.fake_litellm_proxy import FakeLiteLLMProxy
from tests.fake_responses import FakeResponses
from tests.fakellm import FakeLLM, Reply, call


def harness(server: Any, root: Path, **settings: Any) -> Harness:
    config = Config(model=settings.pop("model", server.model), api_base=server.url, api_key=SecretStr(TEST_KEY),
                    mode="allow", timeout=20.0, max_retries=0, **settings)  # type: ignore[arg-type]
    return open_harness(server, root, {"a.txt": "1\n", "b.txt": "2\n"}, config, ScriptedApprover([]))


async def test_claude_behind_a_litellm_proxy_gets_its_thinking_back_in_a_tool_loop(tmp_path: Path) -> None:
    """The signed blocks were received and stored but not sent back: every tool loop's second request
    was refused ("must start with a thinking block")."""
    with FakeLiteLLMProxy(Reply(reasoning="I should read a.", chunk_size=5, tool_calls=[call("read_file", file_path="a.txt")]),
                          Reply(reasoning="Now b.", tool_calls=[call("read_file", file_path="b.txt")]),
                          Reply(text="1 and 2.")) as server:
        h = harness(server, tmp_path / "ws", reasoning="high")
        try:
            done = await h.run("read a then b")
        finally:
            await h.session.close()
    assert (done.success, done.final_response, server.rejected) == (True, "1 and 2.", [])
    assert all(body["reasoning_effort"] == "high" for body in server.requests)
    sent = [m for m in server.requests[-1]["messages"] if m["role"] == "assistant"]
    assert [m["thinking_blocks"][0]["thinking"] for m in sent] == ["I should read a.", "Now b."]
    assert all(m["thinking_blocks"][0]["signature"] for m in sent)


async def test_a_model_named_with_the_responses_route_calls_tools_natively(tmp_path: Path) -> None:
    """openai/responses/o4-mini was put on the text tool protocol (its facts were not found under that
    name), and its native call was dropped: the run ended "answered" after one step."""
    with FakeResponses(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="a holds 1.")) as server:
        h = harness(server, tmp_path / "ws", model="openai/responses/o4-mini")
        try:
            done = await h.run("what does a.txt hold?")
        finally:
            await h.session.close()
    assert (done.success, done.final_response, done.iterations) == (True, "a holds 1.", 2)
    assert server.requests[0]["model"] == "o4-mini" and server.requests[0]["tools"]
    assert [e.tool for e in h.of("tool_call")] == ["read_file"] and server.rejected == []


async def test_a_native_call_from_a_model_on_the_text_protocol_is_run(tmp_path: Path) -> None:
    """A model on the text protocol (ReAct) that answers with a native call anyway gets it run and
    answered, instead of the run ending with the call dropped."""
    with FakeLLM(Reply(tool_calls=[call("read_file", file_path="b.txt")]), Reply(text="FINAL ANSWER: b holds 2.")) as server:
        h = harness(server, tmp_path / "ws", tool_calling="text")
        try:
            done = await h.run("what does b.txt hold?")
        finally:
            await h.session.close()
    assert done.success and done.iterations == 2 and "b holds 2." in done.final_response
    results = [e for e in h.of("tool_result")]
    assert len(results) == 1 and results[0].ok and "2" in (results[0].output or "")
    assert server.rejected == []  # the call and its answer went back as OpenAI pairs them
