"""The strict Anthropic test server refuses what the Messages API refuses, with its status and
error shape (tests/anthropic_rules.py), so the tests that use it see what a provider would."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import Reply

USER = {"role": "user", "content": "hi"}
CALL = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}


def post(server: FakeAnthropic, **body: Any) -> httpx.Response:
    request = {"model": "claude-sonnet-4-5", "max_tokens": 2048, "messages": [USER], **body}
    return httpx.post(server.url + "/v1/messages", json=request, headers={"x-api-key": "k"}, timeout=30)


def refused(response: httpx.Response) -> str:
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


@pytest.mark.parametrize(("body", "message"), [
    ({"messages": [USER, CALL, {"role": "user", "content": "go on"}]},
     "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"),
    ({"messages": [USER, {"role": "assistant", "content": "ok"}, RESULT]}, "unexpected `tool_use_id`"),
    ({"messages": [{"role": "assistant", "content": "first"}]}, 'the first message must use the "user" role'),
    ({"messages": [USER, {"role": "tool", "content": "no"}]}, "Input should be 'user' or 'assistant'"),
    ({"messages": [USER, {"role": "assistant", "content": "ok"}, {"role": "system", "content": "no"}]},
     "a system message must come immediately after a user message"),
    ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}] * 5},
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    ({"thinking": {"type": "enabled", "budget_tokens": 512}}, "greater than or equal to 1024"),
    ({"thinking": {"type": "enabled", "budget_tokens": 4096}}, "`max_tokens` must be greater than"),
    ({"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 4096, "messages": [USER, CALL, RESULT]},
     "Expected `thinking` or `redacted_thinking`, but found `tool_use`"),
    ({"messages": [USER, {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "made up", "signature": "c2lnMQ=="}, *CALL["content"]]}, RESULT],
      "thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 4096}, "Invalid `signature`"),
    ({"tools": [{"name": "mcp.server.read", "input_schema": {"type": "object"}}]}, "String should match pattern"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}, "text content blocks must be non-empty"),
])
def test_what_the_api_refuses_is_refused(body: dict[str, Any], message: str) -> None:
    with FakeAnthropic(Reply(text="never sent")) as server:
        assert message in refused(post(server, **body))
        assert server.remaining == 1  # the script waits for a request the API would take


def test_consecutive_turns_of_one_role_are_merged_as_the_api_does() -> None:
    with FakeAnthropic(Reply(text="fine")) as server:
        response = post(server, messages=[USER, {"role": "user", "content": "and more"}, CALL, RESULT,
                                          {"role": "user", "content": "next"}])
    assert response.status_code == 200 and server.rejected == []


def test_a_signed_thinking_block_comes_back_accepted() -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with FakeAnthropic(Reply(reasoning="Plan: read it.", tool_calls=[]), Reply(text="ok")) as server:
        first = post(server, thinking=thinking, max_tokens=4096).json()
        block = first["content"][0]
        assert block["type"] == "thinking" and server.signer.valid(block)
        again = post(server, thinking=thinking, max_tokens=4096,
                     messages=[USER, {"role": "assistant", "content": [block, {"type": "text", "text": "hm"}]},
                               {"role": "user", "content": "go on"}])
    assert again.status_code == 200, again.text


def test_a_system_message_right_after_a_user_message_is_taken_as_claude_code_sends_it() -> None:
    with FakeAnthropic(Reply(text="fine")) as server:
        response = post(server, model="claude-opus-4-8", messages=[USER, {"role": "system", "content": "agents: ..."}])
    assert response.status_code == 200 and server.rejected == []


def test_a_changed_block_is_refused_as_anthropic_refuses_it_and_a_past_turn_may_leave_it_out() -> None:
    """Anthropic's rules: blocks come back unchanged ("cannot be modified" in the latest assistant
    message, "Invalid `signature`" before it); blocks of a past turn may be left out."""
    thinking = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 4096}
    with FakeAnthropic(Reply(reasoning="Plan: read it.", text="hm"), Reply(text="ok")) as server:
        block = post(server, **thinking).json()["content"][0]
        changed = {**block, "thinking": "Plan: [redacted]."}
        past = {"role": "assistant", "content": [changed, {"type": "text", "text": "hm"}]}
        latest = {"role": "assistant", "content": [changed, *CALL["content"]]}
        assert refused(post(server, **thinking, messages=[USER, latest, RESULT])) == (
            "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot "
            "be modified. These blocks must remain as they were in the original response.")
        assert refused(post(server, **thinking, messages=[USER, past, {"role": "user", "content": "go on"},
                                                           {"role": "assistant", "content": "fine"}, USER])) == (
            "messages.1.content.0: Invalid `signature` in `thinking` block")
        left_out = {"role": "assistant", "content": [{"type": "text", "text": "hm"}]}
        accepted = post(server, **thinking, messages=[USER, left_out, {"role": "user", "content": "go on"}])
    assert accepted.status_code == 200, accepted.text
