"""The planner's own model loop is a run's equal: the session's fallback models take over when its
model fails, and the turn's --max-tokens / --max-cost budget stops it before a request past it.
In-process sessions against the scripted model."""

from __future__ import annotations

from typing import Any

from tests.fakellm import Reply, call
from tests.planning.common import plan_events, plan_reply
from tests.profiles.conftest import make_session  # noqa: F401 - fixture


async def test_a_fallback_model_takes_over_the_planner_after_a_500(make_session: Any) -> None:
    h = make_session(fallback_models=["openai/backup-model"], files={"a.txt": "x\n"})
    h.session.workflow = "structured"
    h.script(Reply(status=500, error_message="boom"), Reply(status=500, error_message="boom"),
             plan_reply("First", "Second"), Reply(text="one"), Reply(text="two"), Reply(text="report"))
    complete = await h.run("do two things")
    assert complete.success and complete.final_response == "report", complete.final_response
    assert [r["model"] for r in h.llm.requests] == ["fake-model", "fake-model"] + ["backup-model"] * 4
    switch = h.of("model_fallback")
    assert len(switch) == 1 and (switch[0].from_model, switch[0].to_model) == ("openai/fake-model",
                                                                               "openai/backup-model")
    assert ("plan_created", ("First", "Second")) in plan_events(h.events)


async def test_the_turns_token_budget_stops_the_planner_before_a_request_past_it(make_session: Any) -> None:
    h = make_session(max_tokens=1000, files={"a.txt": "x\n"})
    h.session.workflow = "structured"
    h.script(*[Reply(tool_calls=[call("read_file", file_path="a.txt")], usage=(600, 50))] * 2,
             plan_reply("First", "Second"), Reply(text="one"), Reply(text="two"), Reply(text="report"))
    complete = await h.run("do two things")
    assert (complete.success, complete.completion_reason) == (False, "budget")
    assert "the token budget is spent (1,300 tokens used of 1,000)" in complete.final_response
    assert len(h.llm.requests) == 2  # the planner's third request was not made
    assert not h.of("plan_created")
    assert [e.type for e in h.events].count("complete") == 1
