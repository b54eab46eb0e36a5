"""The intent router under `auto`, and messages sent while a plan runs."""

from __future__ import annotations

import json
from typing import Any

from agent.planning.router import by_rule, parse_answer
from tests.fakellm import Reply
from tests.planning.common import plan_events, plan_reply, user_text


def route(task_type: str, needs_plan: bool = False) -> Reply:
    return Reply(text=json.dumps({"task_type": task_type, "needs_plan": needs_plan}))


def test_rules_decide_the_obvious_cases_only() -> None:
    assert by_rule("yes, go ahead", True) is None  # not a bare approval: the model decides
    assert by_rule("go ahead!", True).task_type == "confirmation"
    assert by_rule("What does f return?", False).task_type == "question"
    assert by_rule("can you add a test?", False) is None  # a request phrased as a question
    listed = by_rule("Please:\n1. add a CLI\n2. add tests\n3. update the README", False)
    assert listed.task_type == "new_task" and listed.needs_plan
    assert by_rule("make f return 2", False) is None
    assert parse_answer('```json\n{"task_type": "plan_change"}\n```').task_type == "plan_change"
    assert parse_answer("no idea").task_type == "new_task"


async def test_auto_asks_the_router_then_runs_a_one_step_task_directly(make_harness: Any) -> None:
    h = make_harness(mode="allow", files={"a.py": "x = 1\n"})
    h.session.workflow = "auto"
    h.script(route("new_task", needs_plan=False), Reply(text="It is done."))
    complete = await h.run("make x two")
    assert complete.final_response == "It is done." and plan_events(h.events) == [("classification", "new_task")]
    router = h.llm.requests[0]
    assert "Latest message:\nmake x two" in user_text(router) and not router.get("tools")
    assert h.llm.requests[1]["messages"][-1] == {"role": "user", "content": "make x two"}  # the main loop


async def test_auto_answers_a_question_without_the_router_or_a_plan(make_harness: Any) -> None:
    h = make_harness(mode="allow")
    h.session.workflow = "auto"
    h.script(Reply(text="It returns 1."))
    assert (await h.run("what does f return?")).final_response == "It returns 1."
    assert len(h.llm.requests) == 1 and plan_events(h.events) == [("classification", "question")]


async def test_a_message_during_the_plan_is_answered_or_replans_the_remaining_steps(make_harness: Any) -> None:
    h = make_harness(mode="allow")
    h.session.workflow = "auto"
    sent: list[bool] = []

    def sink(event: Any) -> None:
        h.events.append(event)
        if event.type == "step_start" and event.step_id == "1":
            sent.append(h.session.send("what is step one about?"))
            sent.append(h.session.send("instead of Two, write the docs"))

    h.session.sink = sink
    h.script(route("new_task", needs_plan=True), plan_reply("One", "Two"), Reply(text="one done"),
             Reply(text="Step one sets things up."),  # the answer to the question
             route("plan_change"), plan_reply("Docs", goal="Add the feature, documented"),
             Reply(text="docs done"), Reply(text="report"))
    complete = await h.run("build the thing in several steps")
    assert complete.success and sent == [True, True] and h.llm.remaining == 0
    assert plan_events(h.events) == [
        ("classification", "new_task"), ("plan_created", ("One", "Two")),
        ("step_start", "1"), ("step_complete", "1", "done"),
        ("classification", "question"), ("classification", "plan_change"),
        ("plan_created", ("One", "Docs")), ("step_start", "3"), ("step_complete", "3", "done")]
    assert "Question: what is step one about?" in user_text(h.llm.requests[3])
    replan = user_text(h.llm.requests[5])
    assert "instead of Two, write the docs" in replan and "- One: one done" in replan
    assert h.of("plan_created")[-1].plan.steps[0].status == "done"
    assert "Step one sets things up." in "".join(e.text for e in h.of("text_delta"))
    assert not h.session.send("too late")  # no plan runs any more
    contents = [m["content"] for m in h.session.messages if m["role"] in ("user", "assistant")]
    assert contents == ["build the thing in several steps", "what is step one about?",
                        "Step one sets things up.", "instead of Two, write the docs", "report"]
