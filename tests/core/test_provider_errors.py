"""Provider errors as a user meets them: the provider's real status, body and headers from the
scripted servers, through litellm's adapters, in `coder-tui run` (and `serve`, in
tests/serve/test_serve_provider_errors.py). Each is one line naming the provider and what to do,
never a traceback, and the session stays resumable: the user turn is recorded and
`run --resume` continues it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, cli_env, write_files
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import FakeLLM, Reply, call

KEY = "sk-test-provider-errors-0123456789SECRET"

# The bodies the providers document (and send) for these failures.
OPENAI_429 = {"error": {"message": "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): "
                                   "Limit 30000, Used 30000, Requested 1200. Please try again in 2m0s.",
                        "type": "tokens", "param": None, "code": "rate_limit_exceeded"}}
OPENAI_CONTEXT = {"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages "
                                      "resulted in 130412 tokens. Please reduce the length of the messages.",
                            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
OPENAI_401 = {"error": {"message": "Incorrect API key provided: sk-test-********SECRET. You can find your API key "
                                   "at https://platform.openai.com/account/api-keys.",
                        "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
AZURE_FILTERED = {"error": {
    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
               "Please modify your prompt and retry.",
    "type": None, "param": "prompt", "code": "content_filter", "status": 400,
    "innererror": {"code": "ResponsibleAIPolicyViolation",
                   "content_filter_result": {"violence": {"filtered": True, "severity": "medium"}}}}}

CASES = {
    "anthropic-overloaded": (FakeAnthropic, "anthropic/claude-sonnet-4-5", [Reply(status=529, error_message="Overloaded")],
                             r"^Anthropic is overloaded \(overloaded_error\) \(anthropic/claude-sonnet-4-5 at .*; gave up "
                             r"after 1 attempts\): it usually passes within minutes; send the message again later"),
    "rate-limit-long-wait": (FakeLLM, "openai/gpt-4o", [Reply(status=429, error_body=OPENAI_429,
                                                              headers={"retry-after": "120"})],
                             r"^rate limited by the OpenAI-compatible server: Rate limit reached for gpt-4o .* "
                             r"\(openai/gpt-4o at .*\); it asks to wait 2 min: try again after \d\d:\d\d:\d\d UTC$"),
    "context-length": (FakeLLM, "openai/gpt-4o", [Reply(status=400, error_body=OPENAI_CONTEXT)],
                       r"^the conversation no longer fits openai/gpt-4o's context window \(the OpenAI-compatible "
                       r"server: This model's maximum context length is 128000 tokens.*\); start a new session"),
    "content-filter-finish": (FakeLLM, "openai/gpt-4o", [Reply(text="", finish_reason="content_filter")],
                              r"^the OpenAI-compatible server's content filter stopped openai/gpt-4o's reply \(finish "
                              r"reason content_filter\): rephrase the request"),
    "azure-content-filter": (FakeLLM, "azure/gpt-4o", [Reply(status=400, error_body=AZURE_FILTERED)],
                             r"^Azure OpenAI's content filter refused the request for azure/gpt-4o \(The response was "
                             r"filtered .*\); rephrase the request or leave out what it objects to$"),
    "invalid-key": (FakeLLM, "openai/gpt-4o", [Reply(status=401, error_body=OPENAI_401)],
                    r"^authentication failed for openai/gpt-4o at .*: the OpenAI-compatible server rejected the API "
                    r"key \(Incorrect API key provided: .*\); set OPENAI_API_KEY or CODER_TUI_API_KEY, or pass --api-key$"),
}


def address(server: Any, model: str) -> str:
    return server._server.base_url if model.startswith("azure/") else server.url  # Azure: /openai/deployments/


def run(home: Path, ws: Path, server: Any, model: str, prompt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    args = cli("run", prompt, "--workspace", str(ws), "--model", model, "--api-base", address(server, model),
               "--api-key", KEY, "--json", *extra)
    return subprocess.run(args, env=cli_env(home), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def quick_retries(home: Path) -> None:
    config = home / "config" / "coder-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("max_retries = 0\n")


@pytest.mark.parametrize("case", list(CASES))
def test_a_provider_error_is_one_line_and_the_session_resumes(case: str, tmp_path: Path, isolated_home: Path) -> None:
    kind, model, replies, expected = CASES[case]
    ws = write_files(tmp_path / "ws", {"a.txt": "x\n"})
    quick_retries(isolated_home)
    with kind(*replies) as server:
        done = run(isolated_home, ws, server, model, "please look at a.txt")
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr and KEY not in done.stdout + done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()]
        [error] = [e for e in events if e["type"] == "error"]
        assert "\n" not in error["message"] and re.search(expected, error["message"]), error["message"]
        assert events[-1]["type"] == "complete" and events[-1]["completion_reason"] == "error"

        server.script(Reply(text="all good now"))
        again = run(isolated_home, ws, server, model, "try again", "--resume", events[0]["session_id"])
    assert again.returncode == 0, again.stderr
    answer = [json.loads(line) for line in again.stdout.splitlines()][-1]
    assert answer["final_response"] == "all good now"
    sent = server.requests[-1].get("messages", [])
    users = [m["content"] for m in sent if m["role"] == "user"]
    flat = [c if isinstance(c, str) else " ".join(b.get("text", "") for b in c) for c in users]
    assert any("please look at a.txt" in text for text in flat) and "try again" in flat[-1]


def test_a_short_retry_after_is_waited_for_and_said(tmp_path: Path, isolated_home: Path) -> None:
    ws = write_files(tmp_path / "ws", {})
    with FakeLLM(Reply(status=429, error_body=OPENAI_429, headers={"retry-after-ms": "300"}),
                 Reply(text="after the wait")) as server:
        done = run(isolated_home, ws, server, "openai/gpt-4o", "hi")
        server.script(Reply(status=429, error_body=OPENAI_429, headers={"retry-after": "1"}), Reply(text="ok"))
        args = cli("run", "hi", "--workspace", str(ws), "--model", "openai/gpt-4o", "--api-base", server.url,
                   "--api-key", KEY)
        printed = subprocess.run(args, env=cli_env(isolated_home), capture_output=True, text=True, timeout=120,
                                 stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [retry] = [e for e in events if e["type"] == "retrying"]
    assert retry["delay"] == 0.3 and retry["why"].endswith("; waiting the 0.3 s it asks for")
    assert events[-1]["final_response"] == "after the wait"
    assert printed.returncode == 0, printed.stderr
    assert "rate limited by the OpenAI-compatible server: Rate limit reached" in printed.stderr
    assert "waiting the 1 s it asks for; retrying in 1.0 s (attempt 1)" in printed.stderr


async def test_context_length_is_compacted_and_retried_once_then_reported(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "alpha\n"})
    for turn in range(6):
        h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text=f"answer {turn}"))
        await h.run(f"question {turn}")
    before = len(h.llm.requests)
    h.script(Reply(status=400, error_body=OPENAI_CONTEXT), Reply(text="## Goal\nanswer questions"),
             Reply(status=400, error_body=OPENAI_CONTEXT))
    complete = await h.run("one more")
    assert len(h.llm.requests) - before == 3  # the request, the summary, one retry
    assert len(h.of("compacted")) == 1 and complete.completion_reason == "error"
    assert "\n" not in complete.final_response
    assert complete.final_response.startswith("the conversation no longer fits openai/fake-model's context window "
                                              "(the OpenAI-compatible server: This model's maximum context length")
    h.script(Reply(text="shorter now"))
    assert (await h.run("a narrower question")).final_response == "shorter now"
