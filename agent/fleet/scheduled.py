"""Scheduled tasks run on the fleet: `coder-tui tasks run-due --fleet` and `tasks worker --fleet`.

The schedule stays where it is (the workspace's task store on this machine); each due task
becomes a one-job batch on the fleet (a prompt task a session, a named action the map's own work)
and its outcome is recorded in the store as a local run's would be: done or failed, its note, the
session (which lives on the worker that ran it). A job that parks for an approval ends its task
as failed, with the `fleet approve` line that resumes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agent.config import Config
from agent.fleet.batches import connect, new_batch, submit
from agent.fleet.model import BatchSpec, Job
from agent.fleet.store import FleetStore
from agent.knowledge.source import source_for
from agent.knowledge.tasks import Task, TaskStore, task_store
from agent.workspaces.base import Workspace

Say = Callable[[str], None]


async def run_due_on_fleet(workspace: Workspace, config: Config, say: Say, sink: Callable[[Any], None] | None = None,
                           now: float | None = None, github: Any = None) -> list[Task]:
    """Send every due task to the fleet, wait for them all, record how each ended (as `run_due`)."""
    from agent.knowledge.store import knowledge_dir

    if not (knowledge_dir(source_for(workspace).key) / "tasks.sqlite3").exists():
        return []  # nothing was ever scheduled here: no store to create
    target = (github.workspace.remote.full_name, "github") if github is not None else (str(workspace.root), "local")
    tasks = task_store(workspace)
    settings, store = await asyncio.to_thread(connect)
    sent: list[tuple[Task, BatchSpec]] = []
    try:
        due: list[Task] = list(tasks.due(now))
        for task in due:
            if not tasks.claim(task):  # another process took it
                continue
            spec = _batch(task, config)
            submit(store, _app(settings), spec, [target])
            say(f"task {task.id} sent to the fleet as batch {spec.id}: {task.description}")
            sent.append((task, spec))
        return [await _finished(tasks, store, task, spec, say) for task, spec in sent]
    finally:
        tasks.close()


def _app(settings: Any) -> Any:
    from agent.fleet.queue import make_app

    return make_app(settings)


def _batch(task: Task, config: Config) -> BatchSpec:
    action = task.action if task.action in ("explore", "refresh_map", "summarize") else "prompt"
    return new_batch({"prompt": task.description if action == "prompt" else "", "action": action,
                      "payload": dict(task.payload), "mode": config.mode}, 1)


async def _finished(tasks: TaskStore, store: FleetStore, task: Task, spec: BatchSpec, say: Say) -> Task:
    job = await asyncio.to_thread(settled, store, spec)
    if job.state in ("waiting", "parked"):
        note = f"waits for approval in fleet batch {spec.id}: `coder-tui fleet approve {spec.id}` resumes it"
    else:
        note = f"{job.note} (fleet batch {spec.id}, on {job.worker})"
    finished = tasks.finish(task, job.state == "done", note, job.session or None)
    say(f"task {task.id} {finished.status}: {note}")
    return finished


def settled(store: FleetStore, spec: BatchSpec, number: int = 1) -> Job:
    """The job once it is done, failed or parked (waiting on the batch's events, not polling)."""
    after = "0"
    while True:
        job = store.job(spec.id, number)
        if job is None:
            raise RuntimeError(f"batch {spec.id} has no job {number}")
        if job.state in ("done", "failed", "parked"):
            return job
        events = store.events(spec.id, after, block=2.0)
        after = events[-1][0] if events else after
