"""Provider errors in `coder-tui serve`: the provider's real status and body (tests/core/
test_provider_errors.py has them for `run`) reach the client as one `{"error"}` line naming the
provider and what to do, and the same session goes on afterwards."""

from __future__ import annotations

from tests.core.test_provider_errors import OPENAI_401, OPENAI_429, OPENAI_CONTEXT
from tests.fakellm import Reply


def test_provider_errors_are_one_line_and_the_session_goes_on(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(status=429, error_body=OPENAI_429, headers={"retry-after": "600"}),
                     Reply(text="", finish_reason="content_filter"),
                     Reply(status=400, error_body=OPENAI_CONTEXT),
                     Reply(status=401, error_body=OPENAI_401),
                     Reply(text="back to work"))
    _, events = serve.chat("first")
    session_id = events[0]["session_id"]
    messages = [next(e["error"] for e in events if "error" in e)]
    for prompt in ("second", "third", "fourth"):
        _, events = serve.chat(prompt, session_id=session_id)
        messages.append(next(e["error"] for e in events if "error" in e))
        assert events[-1] == {"done": True}
    assert all("\n" not in m and "Traceback" not in m for m in messages)
    limited, filtered, too_long, key = messages
    assert limited.startswith("rate limited by the OpenAI-compatible server: Rate limit reached")
    assert "it asks to wait 10 min: try again after" in limited
    assert filtered.startswith("the OpenAI-compatible server's content filter stopped openai/fake-model's reply")
    assert too_long.startswith("the conversation no longer fits openai/fake-model's context window")
    assert key.startswith("authentication failed for openai/fake-model at") and "rejected the API key" in key
    _, events = serve.chat("fifth", session_id=session_id)
    assert "back to work" in "".join(e.get("content", "") for e in events)
    sent = [m["content"] for m in serve.llm.requests[-1]["messages"] if m["role"] == "user"]
    assert sent == ["first", "second", "third", "fourth", "fifth"]
