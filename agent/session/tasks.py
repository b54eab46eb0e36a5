"""Running due tasks: each as a recorded headless agent session in the task's workspace.

Used by `coder-tui tasks run-due` (cron, systemd timers), by `explore` between steps and by a
running app. Nobody is there to answer approvals, so in ask mode every edit, command and web
request of a task is denied with that reason; give tasks `mode = "allow"` (or plan) to act.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agent.config import Config
from agent.knowledge.source import source_for
from agent.knowledge.tasks import Task, TaskStore, task_store
from agent.workspaces.base import Workspace

__all__ = ["UNATTENDED", "run_due", "task_store"]

UNATTENDED = ("this is a scheduled task running unattended, so nobody can approve it; the user can run "
              "tasks in allow mode (`mode = \"allow\"` in .coder-tui.toml or --mode allow)")
Say = Callable[[str], None]


async def run_due(workspace: Workspace, config: Config, say: Say, sink: Callable[[Any], None] | None = None,
                  now: float | None = None, github: Any = None) -> list[Task]:
    """Run every due task once (oldest first); returns them as finished.

    `github` is the opened GitHub launch of a --github workspace: its tools (pull requests) are
    offered and its unpublished edits are recorded in the task's session.
    """
    from agent.knowledge.store import knowledge_dir

    if not (knowledge_dir(source_for(workspace).key) / "tasks.sqlite3").exists():
        return []  # nothing was ever scheduled here: no store to create
    store = task_store(workspace)
    finished: list[Task] = []
    try:
        for task in store.due(now):
            if not store.claim(task):  # another process took it
                continue
            say(f"running task {task.id}: {task.description}")
            if task.action == "prompt":
                finished.append(await _run_one(store, task, workspace, config, sink, github))
            else:
                finished.append(await _run_action(store, task, workspace, config))
            say(f"task {task.id} {finished[-1].status}: {finished[-1].notes[-1]}")
    finally:
        store.close()
    return finished


async def _run_one(store: TaskStore, task: Task, workspace: Workspace, config: Config,
                   sink: Callable[[Any], None] | None, github: Any) -> Task:
    from agent.approval import DenyAll
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts
    from agent.session.target import Target

    session = None
    try:
        # the task's workspace as a target; it stays open for the next task (see close below)
        target = Target(workspace, github=github)
        session = open_session(target, config, SessionPorts(DenyAll(UNATTENDED), sink or (lambda event: None)),
                               meta={"task_id": task.id, "task": task.description})
        session.route_intents = False  # a due task does its work: "every morning ..." in it does not schedule again
        complete = await session.run(task.description)
    except asyncio.CancelledError:
        store.finish(task, False, "stopped before it finished", session.session_id if session else None)
        raise
    except Exception as exc:  # noqa: BLE001 - any failure is the task's outcome, recorded as such
        return store.finish(task, False, f"failed to run: {exc}", session.session_id if session else None)
    finally:
        if session is not None:
            await session.close(keep_workspace=True)
    answer = complete.final_response.strip().replace("\n", " ")
    note = f"{complete.completion_reason}: {answer[:200]}" if answer else complete.completion_reason
    return store.finish(task, complete.success, note, session.session_id)


async def _run_action(store: TaskStore, task: Task, workspace: Workspace, config: Config) -> Task:
    """A named action (seed 001's callback with its payload): no agent session, the map's own work."""
    try:
        note = await ACTIONS[task.action](workspace, config, task.payload)
    except asyncio.CancelledError:
        store.finish(task, False, "stopped before it finished", None)
        raise
    except Exception as exc:  # noqa: BLE001 - any failure is the task's outcome, recorded as such
        return store.finish(task, False, f"failed to run: {exc}", None)
    return store.finish(task, True, note, None)


async def _refresh_map(workspace: Workspace, config: Config, payload: dict[str, Any]) -> str:
    from agent.knowledge.builder import MapBuilder

    builder = MapBuilder(workspace)
    try:
        r = await builder.refresh()
    finally:
        builder.close()
    return f"mapped {r.files} file(s): {len(r.added)} new, {len(r.changed)} changed, {len(r.removed)} removed"


async def _summarize(workspace: Workspace, config: Config, payload: dict[str, Any]) -> str:
    from agent.knowledge.builder import MapBuilder
    from agent.knowledge.summarize import summary_llm

    builder = MapBuilder(workspace, summary_llm(config))
    try:
        await builder.refresh()
        path = workspace.normalize(str(payload.get("path", "")))
        if path not in builder.store.files():
            raise ValueError(f"{path} is not a file of the workspace's map")
        await builder.summarise_one(path)
    finally:
        builder.close()
    return f"summarised {path}"


async def _explore(workspace: Workspace, config: Config, payload: dict[str, Any]) -> str:
    from agent.knowledge.explore import Explorer
    from agent.knowledge.summarize import summary_llm

    explorer = Explorer(workspace, summary_llm(config))
    try:
        step = await explorer.step()
    finally:
        explorer.close()
    return f"explored: {step.describe()}" if step is not None else "explored: everything is current"


ACTIONS: dict[str, Callable[[Workspace, Config, dict[str, Any]], Any]] = {
    "refresh_map": _refresh_map, "summarize": _summarize, "explore": _explore}
