"""Scheduled tasks: the tools, `coder-tui tasks`, running due tasks once, dead runners, cron."""

from __future__ import annotations

import datetime as dt
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent.knowledge.cron import CronError, parse_cron
from agent.knowledge.tasks import TaskError, TaskStore
from agent.session.record import SessionStore
from tests.conftest import TEST_KEY, cli, cli_env
from tests.fakellm import Reply, call

WAIT = 60.0


def tasks_cli(home: Path, root: Path, llm: Any, *args: str) -> subprocess.CompletedProcess[str]:
    command = cli("tasks", *args, "--workspace", str(root), "--model", llm.model, "--api-base", llm.url,
                  "--api-key", TEST_KEY)
    return subprocess.run(command, env=cli_env(home), capture_output=True, text=True, timeout=120)


def store_for(root: Path) -> TaskStore:
    from agent.session.tasks import task_store
    from agent.workspaces.local import LocalWorkspace

    return task_store(LocalWorkspace(root))


async def test_a_scheduled_task_runs_once_when_due_and_is_recorded(
        make_harness: Any, fake_llm: Any, isolated_home: Path) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("schedule_task", description="count the files", delay_seconds=0),
                               call("schedule_task", description="later", delay_seconds=3600)]),
             Reply(text="scheduled"))
    await h.run("schedule it")
    assert [r.ok for r in h.of("tool_result")] == [True, True]
    fake_llm.script(Reply(text="There is one file."))
    first = tasks_cli(isolated_home, h.root, fake_llm, "run-due", "--mode", "allow")
    assert first.returncode == 0, first.stderr
    assert "running task" in first.stderr and "1 task(s) run." in first.stdout
    requests = len(fake_llm.requests)
    again = tasks_cli(isolated_home, h.root, fake_llm, "run-due")
    assert again.returncode == 0 and "No task is due." in again.stdout and len(fake_llm.requests) == requests
    listing = tasks_cli(isolated_home, h.root, fake_llm, "--json")
    tasks = {t["description"]: t for t in map(json.loads, listing.stdout.splitlines())}
    done = tasks["count the files"]
    assert done["status"] == "completed" and done["runs"] == 1 and done["completed"]
    assert "There is one file." in done["notes"][-1]
    assert tasks["later"]["status"] == "pending"
    session = SessionStore().resolve(done["session_id"])
    text = session.read_text()
    assert "count the files" in text and done["id"] in text  # the run is a recorded session of the task


async def test_the_agent_sees_its_pending_tasks_in_its_system_prompt(make_harness: Any) -> None:
    """As it sees its scratchpad: what it scheduled, without calling list_tasks (seed 001)."""
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("schedule_task", description="run the nightly tests", cron="0 2 * * *"),
                               call("schedule_task", description="dropped later", delay_seconds=3600)]),
             Reply(text="scheduled"), Reply(text="noted"))
    await h.run("schedule them")
    assert "## Your scheduled tasks" not in h.llm.requests[0]["messages"][0]["content"]  # none yet
    await h.run("what is scheduled?")  # the next turn's system prompt
    system = h.llm.requests[2]["messages"][0]["content"]
    assert "## Your scheduled tasks" in system
    assert "[pending] run the nightly tests (cron '0 2 * * *'" in system and "dropped later" in system
    store = store_for(h.root)
    store.cancel(next(t.id for t in store.list() if t.description == "dropped later"))
    store.close()
    h.script(Reply(text="one"))
    await h.run("and now?")
    system = h.llm.requests[3]["messages"][0]["content"]
    assert "run the nightly tests" in system and "dropped later" not in system  # pending ones only


def test_a_task_whose_runner_was_killed_is_marked_failed(
        tmp_path: Path, fake_llm: Any, isolated_home: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    store = store_for(root)
    task = store.schedule("slow work", delay_seconds=0)
    store.close()
    fake_llm.script(Reply(text="working", stall_after=1))
    command = cli("tasks", "run-due", "--workspace", str(root), "--model", fake_llm.model, "--api-base",
                  fake_llm.url, "--api-key", TEST_KEY)
    process = subprocess.Popen(command, env=cli_env(isolated_home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + WAIT
        while not fake_llm.requests:
            assert time.monotonic() < deadline, "the task never reached the model"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(WAIT)
    finally:
        if process.poll() is None:
            process.kill()
    store = store_for(root)
    try:
        found = store.get(task.id)
    finally:
        store.close()
    assert found.status == "failed"
    assert f"the process running it (pid {process.pid}) ended before it finished" in found.notes[-1]


def test_cron_task_is_pending_again_after_a_run(tmp_path: Path, fake_llm: Any, isolated_home: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    store = store_for(root)
    task = store.schedule("daily check", cron="*/5 * * * *", now=time.time() - 3600)
    store.close()
    fake_llm.script(Reply(text="checked"))
    done = tasks_cli(isolated_home, root, fake_llm, "run-due")
    assert done.returncode == 0, done.stderr
    store = store_for(root)
    again = store.get(task.id)
    store.close()
    assert again.status == "pending" and again.runs == 1 and again.due and again.due > time.time()


def test_explore_runs_due_tasks(tmp_path: Path, fake_llm: Any, isolated_home: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("plain text, nothing to summarise\n")
    store = store_for(root)
    task = store.schedule("tidy up", delay_seconds=0)
    store.close()
    fake_llm.script(Reply(text="tidied"))
    command = cli("explore", str(root), "--interval", "0", "--until-done", "--model", fake_llm.model,
                  "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    done = subprocess.run(command, env=cli_env(isolated_home), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    store = store_for(root)
    assert store.get(task.id).status == "completed"
    store.close()


def test_cancel_and_bad_requests(tmp_path: Path, fake_llm: Any, isolated_home: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    store = store_for(root)
    task = store.schedule("x", at="2099-01-01T09:00")
    with pytest.raises(TaskError, match="exactly one"):
        store.schedule("x", at="2099-01-01T09:00", delay_seconds=5)
    with pytest.raises(TaskError, match="ISO 8601"):
        store.schedule("x", at="tomorrow")
    with pytest.raises(CronError, match="5 fields"):
        store.schedule("x", cron="* * *")
    store.close()
    cancelled = tasks_cli(isolated_home, root, fake_llm, "cancel", task.id[:4])
    assert cancelled.returncode == 0 and "[cancelled]" in cancelled.stdout
    twice = tasks_cli(isolated_home, root, fake_llm, "cancel", task.id)
    assert twice.returncode == 2 and "only pending tasks can be cancelled" in twice.stderr
    assert "Traceback" not in twice.stderr


def test_cron_next_times() -> None:
    start = dt.datetime(2026, 11, 24, 22, 31, tzinfo=dt.timezone.utc)
    assert parse_cron("*/15 * * * *").next_after(start).minute == 45
    weekday = parse_cron("0 9 * * 1-5").next_after(dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.timezone.utc))
    assert (weekday.weekday(), weekday.hour, weekday.day) == (0, 9, 30)  # Saturday -> Monday 09:00
    assert parse_cron("@monthly").next_after(start).day == 1
    with pytest.raises(CronError, match="outside 0-59"):
        parse_cron("61 * * * *")
