"""Whole structured workflows against the scripted model: plan, steps, report (in-process)."""

from __future__ import annotations

from typing import Any

from agent.planning.review import PlanDecision, ScriptedReviewer
from tests.fakellm import Reply, call
from tests.planning.common import plan_events, plan_reply, user_text, write


async def test_three_step_plan_runs_each_step_in_its_own_conversation_and_reports(make_harness: Any) -> None:
    h = make_harness(mode="allow", files={"README.md": "# demo\n"})
    h.session.workflow = "structured"
    h.script(Reply(tool_calls=[call("read_file", file_path="README.md")]),
             plan_reply("Write greet", "Write tests", "Final report"),
             write("greet.py", "def greet():\n    return 'hi'\n"), Reply(text="Wrote greet.py with greet()."),
             write("test_greet.py", "from greet import greet\n"), Reply(text="Added test_greet.py."),
             Reply(text="Both files exist."),
             Reply(text="# Report\n\ngreet.py and its test were added."))
    complete = await h.run("add a greet function with a test")
    assert complete.success and complete.final_response.startswith("# Report")
    assert plan_events(h.events) == [
        ("classification", "new_task"),
        ("plan_created", ("Write greet", "Write tests", "Final report")),
        ("step_start", "1"), ("step_complete", "1", "done"),
        ("step_start", "2"), ("step_complete", "2", "done"),
        ("step_start", "3"), ("step_complete", "3", "done")]
    assert h.read("greet.py").startswith("def greet") and h.read("test_greet.py")
    requests = h.llm.requests
    assert len(requests) == 8 and h.llm.remaining == 0
    planner_tools = {t["function"]["name"] for t in requests[0]["tools"]}
    assert "submit_plan" in planner_tools and "read_file" in planner_tools
    assert not planner_tools & {"write_file", "run_command", "replace_lines", "todo_write"}
    # Fresh contexts: step 2 starts with the goal, the plan and step 1's summary, not step 1's talk.
    step2 = requests[4]["messages"]
    assert len(step2) == 2 and "Wrote greet.py with greet()." in user_text(requests[4])
    assert "Your step (2 of 3): Write tests" in user_text(requests[4])
    assert "Write greet (done)" in user_text(requests[6])
    assert "tools" not in requests[7] or not requests[7]["tools"]
    assert "Added test_greet.py." in user_text(requests[7])
    # Traces are tied to their step; only the report is chat text.
    actions = [(a.step_id, a.tool, a.status) for a in h.of("agent_action")]
    assert actions == [("1", "write_file", "running"), ("1", "write_file", "success"),
                       ("2", "write_file", "running"), ("2", "write_file", "success")]
    assert "".join(e.text for e in h.of("text_delta")) == complete.final_response
    assert [e.type for e in h.events].count("complete") == 1
    done = h.of("step_complete")
    assert [d.summary for d in done] == ["Wrote greet.py with greet().", "Added test_greet.py.", "Both files exist."]


async def test_step_checkpoints_let_undo_roll_back_one_step(make_harness: Any) -> None:
    h = make_harness(mode="allow", files={"a.txt": "v0\n"})
    h.session.workflow = "structured"
    h.script(plan_reply("First", "Second"),
             write("a.txt", "v1\n"), write("b.txt", "b\n"), Reply(text="one"),
             write("a.txt", "v2\n"), Reply(text="two"), Reply(text="report"))
    assert (await h.run("edit twice")).success
    labels = [c.label for c in h.of("checkpoint")]
    assert labels == ["plan step 1: First: before write_file a.txt", "plan step 2: Second: before write_file a.txt"]
    await h.session.undo()
    assert h.read("a.txt") == "v1\n" and h.read("b.txt") == "b\n"  # only step 2 was rolled back


async def test_failing_step_is_retried_with_the_failure_then_skipped_in_ask_mode(make_harness: Any) -> None:
    h = make_harness(mode="ask", max_steps=1)
    h.session.workflow = "structured"
    h.session.plan_reviewer = ScriptedReviewer([PlanDecision(decision="approve"), PlanDecision(decision="skip")])
    loop_turn = Reply(tool_calls=[call("list_dir", path="")])  # never answers: hits the step limit
    h.script(plan_reply("Hard step", "Easy step"), loop_turn, loop_turn, Reply(text="easy done"),
             Reply(text="report: step 1 skipped"))
    complete = await h.run("do two things")
    assert complete.success
    assert plan_events(h.events)[2:] == [
        ("plan_decision_required", "review"),
        ("step_start", "1"), ("step_complete", "1", "failed"), ("plan_decision_required", "failed_step"),
        ("step_complete", "1", "skipped"), ("step_start", "2"), ("step_complete", "2", "done")]
    retry_prompt = user_text(h.llm.requests[2])
    assert "A previous attempt at this step failed" in retry_prompt and "step limit" in retry_prompt
    assert "Hard step (skipped)" in user_text(h.llm.requests[3])
    assert h.session.plan_reviewer.asked == ["review", "failed_step"]


async def test_failing_step_stops_the_run_in_allow_mode_with_a_clear_report(make_harness: Any) -> None:
    h = make_harness(mode="allow")
    h.session.workflow = "structured"
    h.script(plan_reply("Break", "Never"), Reply(status=400, error_message="bad request one"),
             Reply(status=400, error_message="bad request two"))
    complete = await h.run("break things")
    assert not complete.success and complete.completion_reason == "error"
    assert plan_events(h.events)[-2:] == [("step_start", "1"), ("step_complete", "1", "failed")]
    assert "The plan stopped:** step 1 (Break) failed" in complete.final_response
    assert "- Never (pending)" in complete.final_response and "--resume" in complete.final_response
    assert len(h.llm.requests) == 3  # planner, two attempts; no report call, no step 2
    assert h.session.unfinished_plan.current().title == "Break"


async def test_plan_mode_ends_with_the_plan(make_harness: Any) -> None:
    h = make_harness(mode="plan")
    h.session.workflow = "structured"
    h.script(plan_reply("One", "Two", goal="Refined"))
    complete = await h.run("plan this")
    assert complete.success and "**Goal:** Refined" in complete.final_response and "1. **One**" in complete.final_response
    assert [e for e in h.types() if e in ("step_start", "plan_created")] == ["plan_created"]
    assert len(h.llm.requests) == 1
    assert [s.status for s in h.session.unfinished_plan.steps] == ["pending", "pending"]


async def test_ask_mode_plan_edit_changes_what_runs(make_harness: Any) -> None:
    h = make_harness(mode="ask")
    h.session.workflow = "structured"
    edited = [{"title": "Third, first now", "description": "moved up"}, {"title": "Brand new"}]
    h.session.plan_reviewer = ScriptedReviewer([PlanDecision.model_validate({"decision": "edit", "steps": edited})])
    h.script(plan_reply("First", "Second", "Third"), Reply(text="did third"), Reply(text="did new"),
             Reply(text="report"))
    assert (await h.run("three things")).success
    created = h.of("plan_created")
    assert [s.title for s in created[-1].plan.steps] == ["Third, first now", "Brand new"]
    starts = [(e.step_id, e.title) for e in h.of("step_start")]
    assert starts == [("1", "Third, first now"), ("2", "Brand new")]
    assert "Your step (1 of 2): Third, first now\nmoved up" in user_text(h.llm.requests[1])


async def test_feedback_asks_the_planner_for_a_new_plan(make_harness: Any) -> None:
    h = make_harness(mode="ask")
    h.session.workflow = "structured"
    h.session.plan_reviewer = ScriptedReviewer([
        PlanDecision(decision="feedback", feedback="also update the changelog"), PlanDecision(decision="approve")])
    h.script(plan_reply("Code"), plan_reply("Code", "Changelog"), Reply(text="c"), Reply(text="l"), Reply(text="r"))
    assert (await h.run("change it")).success
    assert "also update the changelog" in user_text(h.llm.requests[1])
    assert "1. [pending] Code" in user_text(h.llm.requests[1])
    assert [len(e.plan.steps) for e in h.of("plan_created")] == [1, 2]


async def test_an_invalid_plan_is_sent_back_once_with_the_error(make_harness: Any) -> None:
    h = make_harness(mode="plan")
    h.session.workflow = "structured"
    h.script(Reply(tool_calls=[call("submit_plan", refined_goal="g", steps=[])]), plan_reply("Fixed"))
    assert (await h.run("plan a thing")).success
    sent_back = [m for m in h.llm.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "The plan is invalid: `steps`: List should have at least 1 item" in sent_back
    h2 = make_harness(mode="plan")
    h2.session.workflow = "structured"
    h2.script(Reply(tool_calls=[call("submit_plan", refined_goal="", steps=[{"title": "a"}])]),
              Reply(text="I will not plan."))
    complete = await h2.run("plan something")
    assert complete.completion_reason == "error" and "did not produce a valid plan" in complete.final_response


async def test_a_plan_made_in_plan_mode_runs_on_ok_once_the_mode_allows(make_harness: Any) -> None:
    h = make_harness(mode="plan")
    h.session.plan_next = True  # the app's `/plan TASK` under the default (direct) workflow
    h.script(plan_reply("One"))
    assert (await h.run("plan one thing")).success
    assert h.session.workflow == "direct" and h.session.unfinished_plan is not None
    assert (await h.run("ok")).final_response.startswith("**Goal:**")  # plan mode: nothing runs
    assert len(h.llm.requests) == 1
    h.session.mode = "allow"
    h.script(Reply(text="did one"), Reply(text="report"))
    assert (await h.run("go ahead")).final_response == "report"
    assert h.of("step_complete")[-1].summary == "did one" and h.session.unfinished_plan is None
    h.script(Reply(text="direct answer"))
    assert (await h.run("go ahead")).final_response == "direct answer"  # no plan left: the direct loop


async def test_a_model_that_only_answers_in_text_gets_a_plan_error_meant_for_the_user(make_harness: Any) -> None:
    # The user was shown the model's instruction: "No plan was submitted: answer by calling submit_plan."
    h = make_harness(mode="plan")
    h.session.workflow = "structured"
    h.script(Reply(text="Here is my plan: do it."), Reply(text="Step 1: do it."))
    complete = await h.run("plan something")
    assert complete.completion_reason == "error"
    assert complete.final_response == ("the planner did not produce a valid plan: the model answered in text "
                                       "instead of calling submit_plan, also when asked again (it said: Step 1: "
                                       "do it.)")
