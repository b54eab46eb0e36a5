"""Seed 001's tasks with a payload and a callback: besides prompts, named actions (`refresh_map`,
`summarize` FILE, `explore`) scheduled by the agent's tool and run when due without an agent session."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agent.knowledge.tasks import TaskError, TaskStore
from tests.fakellm import Reply, call
from tests.knowledge.test_tasks import store_for, tasks_cli

SUMMARY = {"description": "Adds numbers.", "tags": ["math"], "exports": ["add"], "dependencies": [],
           "complexity": "low"}


async def test_actions_scheduled_by_the_agent_run_when_due(make_harness: Any, fake_llm: Any,
                                                           isolated_home: Path) -> None:
    h = make_harness(files={"util.py": "def add(a, b):\n    return a + b\n", "README.md": "hi\n"})
    h.script(Reply(tool_calls=[call("schedule_task", action="refresh_map", delay_seconds=0),
                               call("schedule_task", action="summarize", payload={"path": "util.py"},
                                    delay_seconds=0),
                               call("schedule_task", action="summarize", delay_seconds=0)]),
             Reply(text="scheduled"))
    await h.run("keep the map fresh")
    results = h.of("tool_result")
    assert [r.ok for r in results] == [True, True, False]
    assert "needs a payload with the file's path" in results[2].error
    fake_llm.script(Reply(text=json.dumps(SUMMARY)))
    done = tasks_cli(isolated_home, h.root, fake_llm, "run-due", "--mode", "allow")
    assert done.returncode == 0, done.stderr
    listing = {t["action"]: t for t in map(json.loads, tasks_cli(isolated_home, h.root, fake_llm, "--json")
                                           .stdout.splitlines())}
    assert listing["refresh_map"]["status"] == "completed"
    assert listing["refresh_map"]["notes"][-1].startswith("mapped 2 file(s)")
    assert listing["summarize"]["status"] == "completed" and listing["summarize"]["payload"] == {"path": "util.py"}
    assert listing["summarize"]["notes"][-1] == "summarised util.py"
    assert listing["summarize"]["session_id"] is None  # no agent session: the map's own work
    assert len(fake_llm.requests) == 3  # the agent's two requests, then the one summary (a refresh needs no model)


def test_a_failing_action_is_recorded_as_failed(tmp_path: Path, fake_llm: Any, isolated_home: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    store = store_for(root)
    task = store.schedule("", delay_seconds=0, action="summarize", payload={"path": "missing.py"})
    store.close()
    assert task.description == "summarize missing.py"
    done = tasks_cli(isolated_home, root, fake_llm, "run-due")
    assert done.returncode == 1
    store = store_for(root)
    found = store.get(task.id)
    store.close()
    assert found.status == "failed" and "missing.py is not a file of the workspace's map" in found.notes[-1]


def test_a_store_made_before_actions_is_upgraded(tmp_path: Path, isolated_home: Path) -> None:
    old_columns = ("id", "description", "status", "created", "updated", "completed", "due", "cron", "notes",
                   "session_id", "runs", "pid", "host", "workspace")
    store = TaskStore("old-key")
    path = store.path
    store.close()
    path.unlink()
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE tasks ({', '.join(old_columns)}, PRIMARY KEY (id))")
    db.execute(f"INSERT INTO tasks VALUES ({', '.join('?' * len(old_columns))})",
               ("abc12345", "old prompt", "pending", "t", "t", None, 1.0, None, "[]", None, 0, None, None, "ws"))
    db.commit()
    db.close()
    store = TaskStore("old-key")
    try:
        [task] = store.list()
        assert (task.action, task.payload, task.description) == ("prompt", {}, "old prompt")
        with pytest.raises(TaskError, match="action must be one of"):
            store.schedule("x", delay_seconds=0, action="dance")
    finally:
        store.close()
