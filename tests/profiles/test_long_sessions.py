"""Sessions longer than the context window, budgets, fallback models and web_fetch's prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from agent.compaction import SUMMARY_HEADER, SUMMARY_PROMPT, choose_cut
from agent.session.record import SessionStore, load
from agent.tools.web import EXTRACT_PROMPT
from agent.approval import Decision
from tests.fakellm import Reply, call
from tests.threaded import ThreadedApp

WINDOW = 12_000  # tokens, set in config: the scripted model is unknown to litellm
BIG = "".join(f"line {i}: {'lorem ipsum ' * 6}\n" for i in range(100))  # ~8,000 characters


def tokens(body: dict[str, Any]) -> int:
    return len(json.dumps(body["messages"], ensure_ascii=False)) // 4


def pairs_intact(messages: list[dict[str, Any]]) -> bool:
    """Every tool result follows the assistant message that called it, and every call has its result."""
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                return False
            open_calls.discard(message["tool_call_id"])
        elif open_calls:
            return False
        if message["role"] == "assistant":
            open_calls = {c["id"] for c in message.get("tool_calls") or []}
    return not open_calls


def long_task(reads: int, summaries: list[dict[str, Any]]) -> Any:
    """The model reads big files `reads` times per run, then answers; summaries are written on request."""
    made = [0]

    def respond(body: dict[str, Any]) -> Reply:
        if body["messages"][0]["content"].startswith(SUMMARY_PROMPT):
            summaries.append(body)
            return Reply(text=f"## Goal\nread the files\n## Files touched\nbig files, {len(summaries)} summaries")
        if made[0] >= reads:
            made[0] = 0
            return Reply(text="done reading")
        made[0] += 1
        return Reply(tool_calls=[call("read_file", file_path=f"big{made[0] % 3}.txt")])

    return respond


async def test_a_long_session_compacts_finishes_and_resumes(make_session: Any) -> None:
    files = {f"big{i}.txt": BIG for i in range(3)}
    h = make_session(context_window=WINDOW, small_model="openai/small-model", files=files)
    summaries: list[dict[str, Any]] = []
    h.llm.responder = long_task(6, summaries)
    complete = await h.run("read the big files")
    assert complete.completion_reason == "answered"
    compacted = h.of("compacted")
    assert compacted and all(e.tokens_after < e.tokens_before for e in compacted)
    assert summaries and all(s["model"] == "small-model" for s in summaries)
    agent_requests = [r for r in h.llm.requests if not r["messages"][0]["content"].startswith(SUMMARY_PROMPT)]
    assert all(tokens(r) < WINDOW for r in agent_requests)  # no request passed the window
    assert all(pairs_intact(r["messages"][1:]) for r in agent_requests)
    after = agent_requests[-1]["messages"]
    assert after[1]["content"].startswith(SUMMARY_HEADER) and "## Goal" in after[1]["content"]
    session_id = h.session.session_id
    await h.session.close()

    recorded = load(SessionStore().resolve(session_id))
    assert sum(1 for m in recorded.history if m["role"] == "tool") == 6  # the file keeps everything
    assert recorded.messages[0]["content"].startswith(SUMMARY_HEADER)

    resumed = make_session(context_window=WINDOW, resume=session_id, files=files)
    h.llm.requests.clear()
    complete = await resumed.run("next: read them again")
    assert complete.completion_reason == "answered"
    # The resume starts at the recorded compaction: when what it kept (with the tools offered) is
    # already past the threshold, it is compacted again first, and that summary begins with the old one.
    resummarised = [r for r in h.llm.requests if r["messages"][0]["content"].startswith(SUMMARY_PROMPT)]
    assert all(r["messages"][1]["content"].startswith(f"The conversation so far:\n\n### user\n{SUMMARY_HEADER}")
               for r in resummarised)
    first = next(r for r in h.llm.requests if not r["messages"][0]["content"].startswith(SUMMARY_PROMPT))["messages"]
    assert first[1]["content"].startswith(SUMMARY_HEADER) and first[-1]["content"] == "next: read them again"
    assert all(tokens(r) < WINDOW for r in h.llm.requests if not r["messages"][0]["content"].startswith(SUMMARY_PROMPT))


async def test_compact_by_hand_keeps_the_last_turns(make_session: Any) -> None:
    h = make_session(files={"a.txt": "alpha\n"})
    for turn in range(6):
        h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text=f"answer {turn}"))
        await h.run(f"question {turn}")
    h.script(Reply(text="## Goal\nanswer questions"))
    event = await h.session.agent.compact_now()
    assert event is not None and event.manual and event.replaced_messages > 0
    messages = h.session.messages
    assert messages[1]["content"].startswith(SUMMARY_HEADER)
    assert messages[-1]["content"] == "answer 5" and pairs_intact(messages[2:])
    assert h.of("compacted")[-1] == event


def test_the_cut_never_separates_a_call_from_its_result() -> None:
    messages = [{"role": "system", "content": ""}, {"role": "user", "content": "u" * 400}]
    for i in range(5):
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "x", "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "r" * 400})
    for budget in (50, 150, 250, 400, 10_000):
        cut = choose_cut(messages, budget)
        assert messages[cut]["role"] in ("user", "assistant") and pairs_intact(messages[cut:])


async def test_a_token_budget_stops_the_run_and_says_what_was_spent(make_session: Any) -> None:
    h = make_session(max_tokens=1000, files={"a.txt": "x\n"})
    h.script(*[Reply(tool_calls=[call("read_file", file_path="a.txt")], usage=(600, 50))] * 3)
    complete = await h.run()
    assert (complete.success, complete.completion_reason, complete.iterations) == (False, "budget", 2)
    assert "the token budget is spent (1,300 tokens used of 1,000)" in complete.final_response
    assert len(h.llm.requests) == 2


async def test_a_cost_budget_stops_the_run(make_session: Any) -> None:
    h = make_session(model="openai/gpt-4o", max_cost=0.1, files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")], usage=(100_000, 1_000)), Reply(text="no"))
    complete = await h.run()
    assert complete.completion_reason == "budget" and len(h.llm.requests) == 1
    assert "the cost budget is spent ($0.2600 of $0.1000, 101,000 tokens)" in complete.final_response


async def test_a_cost_limit_on_a_model_litellm_cannot_price_is_said_once(make_session: Any) -> None:
    h = make_session(model="openai/my-proxy-alias", max_cost=0.1)
    h.script(Reply(text="one", usage=(100_000, 1_000)), Reply(text="two", usage=(100_000, 1_000)))
    await h.run()
    await h.run()
    warnings = [e.message for e in h.of("warning") if "--max-cost" in e.message]
    assert warnings == ["--max-cost is not applied: litellm has no prices for openai/my-proxy-alias, so its "
                        "cost is unknown; --max-tokens still limits a run"]
    priced = make_session(model="openai/gpt-4o", max_cost=5.0)
    priced.script(Reply(text="fine"))
    await priced.run()
    assert not [e for e in priced.of("warning") if "--max-cost" in e.message]


async def test_a_fallback_model_takes_over_after_a_500(make_session: Any) -> None:
    h = make_session(fallback_models=["openai/backup-model"])
    h.script(Reply(status=500, error_message="boom"), Reply(status=500, error_message="boom"),
             Reply(text="from the backup"), Reply(text="still the backup"))
    complete = await h.run()
    assert complete.final_response == "from the backup"
    assert [r["model"] for r in h.llm.requests] == ["fake-model", "fake-model", "backup-model"]
    switch = h.of("model_fallback")[0]
    assert (switch.from_model, switch.to_model) == ("openai/fake-model", "openai/backup-model")
    assert "gave up after 2 attempts" in switch.reason
    await h.run()
    assert h.llm.requests[-1]["model"] == "backup-model"


async def test_a_request_too_long_for_the_model_goes_to_the_next(make_session: Any) -> None:
    h = make_session(fallback_models=["openai/long-model"])
    h.script(Reply(status=400, error_code="context_length_exceeded",
                   error_message="This model's maximum context length is 8192 tokens."), Reply(text="fits"))
    assert (await h.run()).final_response == "fits"
    assert h.of("model_fallback")[0].to_model == "openai/long-model"


async def test_without_fallbacks_failures_still_end_the_run(make_session: Any) -> None:
    h = make_session()
    h.script(Reply(status=500), Reply(status=500))
    complete = await h.run()
    assert complete.completion_reason == "error" and not h.of("model_fallback")


@pytest.fixture
def docs_site() -> Any:
    async def page(request: web.Request) -> web.Response:
        filler = "<p>" + "Unrelated text. " * 2000 + "</p>"
        return web.Response(text=f"<html><body>{filler}<h2>frob</h2><p>frob(a, b) returns a + b.</p>"
                                 f"{filler}</body></html>", content_type="text/html")

    def build() -> web.Application:
        app = web.Application()
        app.router.add_get("/docs", page)
        return app

    server = ThreadedApp(build).start()
    yield server
    server.stop()


async def test_web_fetch_prompt_has_the_small_model_extract_the_answer(make_session: Any, docs_site: Any) -> None:
    h = make_session(small_model="openai/small-model", decisions=[Decision("allow_once")])  # loopback: asked
    url = f"{docs_site.base_url}/docs"
    h.script(Reply(tool_calls=[call("web_fetch", url=url, prompt="what does frob return?")]),
             Reply(text="frob(a, b) returns a + b."), Reply(text="It adds."))
    assert (await h.run()).final_response == "It adds."
    extraction = h.llm.requests[1]
    assert extraction["model"] == "small-model" and extraction["messages"][0]["content"] == EXTRACT_PROMPT
    assert "Request: what does frob return?" in extraction["messages"][1]["content"]
    assert "frob(a, b) returns a + b." in extraction["messages"][1]["content"]
    result = h.llm.requests[2]["messages"][-1]["content"]
    assert result.startswith(f"{url} (HTTP 200)\nextracted for: what does frob return?")
    assert result.endswith("frob(a, b) returns a + b.") and "Unrelated" not in result
    assert len(result) < 1000


async def test_session_file_without_compaction_loads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [{"kind": "meta", "data": {"session_id": "s"}},
             {"kind": "message", "data": {"role": "user", "content": "hi"}}]
    path.write_text("".join(json.dumps({"t": 0, **line}) + "\n" for line in lines))
    data = load(path)
    assert data.messages == data.history == [{"role": "user", "content": "hi"}]


async def test_a_request_too_long_without_fallbacks_is_compacted_and_retried(make_session: Any) -> None:
    h = make_session(files={"a.txt": "alpha\n"})
    for turn in range(6):
        h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text=f"answer {turn}"))
        await h.run(f"question {turn}")
    h.script(Reply(status=400, error_code="context_length_exceeded", error_message="This model's maximum context length is 8192 tokens."),
             Reply(text="## Goal\nanswer questions"), Reply(text="fits now"))
    complete = await h.run("one more")
    assert complete.final_response == "fits now" and len(h.of("compacted")) == 1
    retried = h.llm.requests[-1]["messages"]
    assert retried[1]["content"].startswith(SUMMARY_HEADER) and retried[-1]["content"] == "one more"


def test_the_estimate_learns_from_the_providers_counts() -> None:
    from agent.compaction import Compactor, estimate_tokens

    messages = [{"role": "system", "content": ""}, {"role": "user", "content": "x" * 4000}]
    compactor = Compactor(2000, None, print, print)  # type: ignore[arg-type]
    assert not compactor.needed(messages, [])  # about 1,000 tokens by characters
    compactor.calibrate(estimate_tokens(messages), 2 * estimate_tokens(messages))  # the provider counted twice
    assert compactor.needed(messages, [])
    compactor.calibrate(100, 100_000)
    assert compactor.ratio == 3.0  # a wild count is clamped
