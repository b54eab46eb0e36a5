"""Seed 001's intents through the router: a scheduled task from the user's message (confirmed by
the schedule_task approval), start/stop of continuous exploration, a repository switch."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from agent.approval import Decision
from agent.attachments import typed_part
from agent.planning.intents import detect
from tests.conftest import TEST_KEY, run_cli
from tests.fakellm import Reply, call
from tests.planning.common import plan_events


def stored_tasks(root: Path) -> list[Any]:
    from agent.session.tasks import task_store
    from agent.workspaces.local import LocalWorkspace

    store = task_store(LocalWorkspace(root))
    try:
        return store.list()
    finally:
        store.close()


def last_user(request: dict[str, Any]) -> str:
    return [m for m in request["messages"] if m["role"] == "user"][-1]["content"]


def test_rules_read_the_schedule_out_of_the_message() -> None:
    now = dt.datetime(2026, 5, 1, 12, 0).astimezone()
    morning = detect("every morning check the open issues", now)
    assert (morning.kind, morning.cron, morning.task) == ("schedule", "0 9 * * *", "check the open issues")
    later = detect("in 10 minutes run the tests", now)
    assert (later.delay_seconds, later.task) == (600, "run the tests")
    assert detect("every weekday at 8am summarise open PRs", now).cron == "0 8 * * 1-5"
    assert detect("every 15 minutes check CI", now).cron == "*/15 * * * *"
    assert detect("daily at 7:30 run the linter", now).cron == "30 7 * * *"
    at = detect("at 9 run the benchmarks", now)  # 9:00 has passed at noon: tomorrow
    assert dt.datetime.fromisoformat(at.at) == now.replace(hour=9, minute=0) + dt.timedelta(days=1)
    assert detect("start exploring the repo").kind == "explore_start"
    assert detect("Stop exploration.").kind == "explore_stop"
    switch = detect("switch the repository to octo/other@dev")
    assert (switch.kind, switch.repository, switch.ref) == ("repository", "octo/other", "dev")
    for plain in ("what runs every morning?", "look at 9 files and fix them", "every file needs a header",
                  "fix the bug in parse_at", "explore how the cache works"):
        assert detect(plain) is None, plain


async def test_a_scheduling_message_becomes_a_task_only_after_the_approval(make_harness: Any) -> None:
    h = make_harness(mode="ask", decisions=[Decision("allow_once")])
    h.script(Reply(tool_calls=[call("schedule_task", description="check the open issues", cron="0 9 * * *")]),
             Reply(text="Scheduled every morning at 9."))
    complete = await h.run("every morning check the open issues")
    assert complete.success and plan_events(h.events)[0] == ("classification", "schedule")
    note = last_user(h.llm.requests[0])
    assert "schedule_task" in note and "cron='0 9 * * *'" in note and "'check the open issues'" in note
    assert typed_part(note) == ("every morning check the open issues", [])  # what a replay shows
    assert [r.tool for r in h.approver.requests] == ["schedule_task"]  # the user's confirmation
    [task] = stored_tasks(h.root)
    assert (task.cron, task.description, task.status) == ("0 9 * * *", "check the open issues", "pending")


async def test_a_refused_schedule_stores_nothing(make_harness: Any) -> None:
    h = make_harness(mode="ask", decisions=[Decision("deny", feedback="not now")])
    h.script(Reply(tool_calls=[call("schedule_task", description="run the tests", delay_seconds=600)]),
             Reply(text="Not scheduled."))
    await h.run("in 10 minutes run the tests")
    assert "delay_seconds=600" in last_user(h.llm.requests[0])
    assert stored_tasks(h.root) == []


async def test_the_small_model_can_say_schedule_under_auto(make_harness: Any) -> None:
    h = make_harness(mode="allow")
    h.session.workflow = "auto"
    h.script(Reply(text=json.dumps({"task_type": "schedule"})),
             Reply(tool_calls=[call("schedule_task", description="tidy the changelog", cron="0 17 * * 5")]),
             Reply(text="Scheduled."))
    await h.run("tidy the changelog at the end of every working week, please")
    assert plan_events(h.events) == [("classification", "schedule")]
    assert "[intent router]" in last_user(h.llm.requests[1]) and "Work out the time" in last_user(h.llm.requests[1])
    assert [t.cron for t in stored_tasks(h.root)] == ["0 17 * * 5"]


async def test_exploration_requests_are_answered_without_the_model_in_a_session(make_harness: Any) -> None:
    h = make_harness(mode="allow")
    complete = await h.run("start exploring the repo")
    assert complete.success and "coder-tui explore" in complete.final_response
    assert h.llm.requests == [] and plan_events(h.events) == [("classification", "explore")]


async def test_a_repository_switch_is_handed_to_the_model_with_a_note(make_harness: Any) -> None:
    h = make_harness(mode="allow")
    h.script(Reply(text="Switching."))
    await h.run("switch to octo/other@dev")
    assert plan_events(h.events) == [("classification", "repository")]
    note = last_user(h.llm.requests[0])
    assert "set_repository_context" in note and "'octo/other'" in note and "'dev'" in note


def test_run_schedules_from_a_message_and_explains_exploration(fake_llm: Any, isolated_home: Path,
                                                               tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    fake_llm.script(Reply(tool_calls=[call("schedule_task", description="run the tests", delay_seconds=600)]),
                    Reply(text="Scheduled in ten minutes."))
    base = ("--workspace", str(root), "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    done = run_cli(isolated_home, "run", "in 10 minutes run the tests", "--mode", "allow", *base)
    assert done.returncode == 0, done.stderr
    assert "delay_seconds=600" in last_user(fake_llm.requests[0])
    assert [t.description for t in stored_tasks(root)] == ["run the tests"]
    asked = len(fake_llm.requests)
    explore = run_cli(isolated_home, "run", "start exploring", *base)
    assert explore.returncode == 0 and "coder-tui explore" in explore.stdout
    assert len(fake_llm.requests) == asked


def test_a_due_task_with_schedule_words_does_its_work_instead_of_scheduling_again(
        fake_llm: Any, isolated_home: Path, tmp_path: Path) -> None:
    from agent.session.tasks import task_store
    from agent.workspaces.local import LocalWorkspace

    root = tmp_path / "ws"
    root.mkdir()
    store = task_store(LocalWorkspace(root))
    store.schedule("every morning check the open issues", delay_seconds=0)
    store.close()
    fake_llm.script(Reply(text="Two issues are open."))
    done = run_cli(isolated_home, "tasks", "run-due", "--mode", "allow", "--workspace", str(root), "--model",
                   fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    assert done.returncode == 0, done.stderr
    assert last_user(fake_llm.requests[0]) == "every morning check the open issues"  # no steering note
    assert [t.status for t in stored_tasks(root)] == ["completed"]


def test_a_prompt_without_the_words_of_a_command_compiles_no_pattern() -> None:
    """The patterns are compiled on first need: "say hi" (every cold run's prompt in the bench) needs none."""
    from agent.planning import intents

    intents._pattern.cache_clear()
    assert intents.detect("say hi") is None and intents.detect("fix the bug in src/app.py") is None
    assert intents._pattern.cache_info().currsize == 2  # "in" and "/" above: the delay and repo patterns only
    intents._pattern.cache_clear()
    assert intents.detect("say hi") is None
    assert intents._pattern.cache_info().currsize == 0
    found = intents.detect("every morning at 9 run the tests")
    assert found is not None and found.cron == "0 9 * * *"
