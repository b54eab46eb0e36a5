"""Scheduled tasks, stored durably per workspace (seed 001's scheduleTask / listAgentTasks).

A task is a prompt the agent runs later as a recorded headless session, or a named action with a
payload (seed 001's callback and payload): `explore` (one exploration step), `summarize` (one
file's map summary, payload `{"path": ...}`) or `refresh_map` (the map's structure, no model);
once at a time, after a delay, or on a cron schedule. Status: pending, in-progress, completed, failed, cancelled.
Running a task first claims it in one SQLite transaction, so two processes never run the same
task; a task left in progress by a process that died is marked failed with that reason.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import sqlite3
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agent.knowledge.cron import parse_cron
from agent.knowledge.store import knowledge_dir, open_private_db
from agent.knowledge.taskstates import STATUSES, Status

if TYPE_CHECKING:
    from agent.workspaces.base import Workspace

COLUMNS = ("id", "description", "status", "created", "updated", "completed", "due", "cron", "notes",
           "session_id", "runs", "pid", "host", "workspace", "action", "payload")
ADDED = ("action", "payload")  # columns a store made before them lacks (added on open)
SCHEMA = f"CREATE TABLE IF NOT EXISTS tasks ({', '.join(COLUMNS)}, PRIMARY KEY (id))"
Action = Literal["prompt", "explore", "summarize", "refresh_map"]
ACTIONS: tuple[str, ...] = ("prompt", "explore", "summarize", "refresh_map")
PROMPT_TASKS = 20  # pending tasks the system prompt lists (list_tasks shows them all)


class TaskError(Exception):
    """A task request that cannot be done (unknown id, bad time); the message says why."""


@dataclass
class Task:
    id: str
    description: str
    status: Status
    created: str
    updated: str
    completed: str | None = None
    due: float | None = None  # epoch seconds of the next run
    cron: str | None = None
    notes: list[str] = field(default_factory=list)
    session_id: str | None = None
    runs: int = 0
    pid: int | None = None
    host: str | None = None
    workspace: str = ""
    action: str = "prompt"
    payload: dict[str, Any] = field(default_factory=dict)

    def due_text(self) -> str:
        if self.due is None:
            return "-"
        return dt.datetime.fromtimestamp(self.due).astimezone().isoformat(timespec="minutes")

    def to_json(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in COLUMNS if name not in ("pid", "host")}
        data["payload"] = dict(self.payload)
        data["due"] = self.due_text() if self.due is not None else None
        return data

    def line(self) -> str:
        when = f"cron {self.cron!r}, next {self.due_text()}" if self.cron else f"due {self.due_text()}"
        session = f", session {self.session_id}" if self.session_id else ""
        note = f" — {self.notes[-1]}" if self.notes else ""
        action = "" if self.action == "prompt" else f"{self.action}{_payload_text(self.payload)}: "
        return f"{self.id}  [{self.status}] {action}{self.description} ({when}, runs {self.runs}{session}){note}"


def _payload_text(payload: dict[str, Any]) -> str:
    return f" {payload['path']}" if payload.get("path") else ""


def check_action(action: str, payload: dict[str, Any] | None) -> dict[str, Any]:
    """The payload an action needs, checked (TaskError says what is missing)."""
    if action not in ACTIONS:
        raise TaskError(f"action must be one of {', '.join(ACTIONS)} (got {action!r})")
    payload = dict(payload or {})
    if action == "summarize" and not isinstance(payload.get("path"), str):
        raise TaskError('the summarize action needs a payload with the file\'s path: {"path": "src/app.py"}')
    return payload


def now_text() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def parse_at(text: str) -> float:
    """An ISO 8601 time (local time when it names no zone) as epoch seconds."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise TaskError(f"`at` must be an ISO 8601 time such as 2026-05-01T09:00 (got {text!r})") from None
    return (when if when.tzinfo else when.astimezone()).timestamp()


class TaskStore:
    def __init__(self, key: str, workspace: str = "") -> None:
        self.path = knowledge_dir(key) / "tasks.sqlite3"
        self.workspace = workspace
        self.db = open_private_db(self.path)
        self.db.execute(SCHEMA)
        have = {row[1] for row in self.db.execute("PRAGMA table_info(tasks)")}
        for column in ADDED:
            if column not in have:
                self.db.execute(f"ALTER TABLE tasks ADD COLUMN {column}")
        self.reap()

    def close(self) -> None:
        self.db.close()

    def schedule(self, description: str, at: str | None = None, delay_seconds: float | None = None,
                 cron: str | None = None, now: float | None = None, action: str = "prompt",
                 payload: dict[str, Any] | None = None) -> Task:
        given = [name for name, value in (("at", at), ("delay_seconds", delay_seconds), ("cron", cron))
                 if value is not None]
        if len(given) != 1:
            raise TaskError("give exactly one of `at`, `delay_seconds` or `cron`"
                            + (f" (got {', '.join(given)})" if given else ""))
        payload = check_action(action, payload)
        if not description.strip():
            if action == "prompt":
                raise TaskError("the task needs a description: the prompt the agent will run")
            description = f"{action}{_payload_text(payload)}"
        moment = dt.datetime.now().astimezone().timestamp() if now is None else now
        if cron is not None:
            due = parse_cron(cron).next_after(dt.datetime.fromtimestamp(moment).astimezone()).timestamp()
        elif at is not None:
            due = parse_at(at)
        else:
            if delay_seconds is None or delay_seconds < 0:
                raise TaskError("delay_seconds must be 0 or more")
            due = moment + delay_seconds
        stamp = now_text()
        task = Task(uuid.uuid4().hex[:8], description.strip(), "pending", stamp, stamp, due=due, cron=cron,
                    workspace=self.workspace, action=action, payload=payload)
        self._write(task)
        return task

    def get(self, task_id: str) -> Task:
        rows = self._select("WHERE id LIKE ?", (f"{task_id.strip()}%",))
        if not rows:
            raise TaskError(f"no task {task_id!r}; list_tasks shows the ids")
        if len(rows) > 1:
            raise TaskError(f"{task_id!r} matches {len(rows)} tasks; give more of the id")
        return rows[0]

    def list(self, status: str | None = None) -> list[Task]:
        if status is not None and status not in STATUSES:
            raise TaskError(f"status must be one of {', '.join(STATUSES)} (got {status!r})")
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        return sorted(self._select(where, args), key=lambda t: (t.due or 0, t.created))

    def cancel(self, task_id: str) -> Task:
        task = self.get(task_id)
        if task.status not in ("pending",):
            raise TaskError(f"task {task.id} is {task.status}; only pending tasks can be cancelled")
        task.status, task.updated = "cancelled", now_text()
        self._write(task)
        return task

    def due(self, now: float | None = None) -> list[Task]:
        moment = dt.datetime.now().timestamp() if now is None else now
        return [t for t in self.list("pending") if t.due is not None and t.due <= moment]

    def claim(self, task: Task) -> bool:
        """Mark the task in progress by this process, unless another process took it first."""
        cursor = self.db.execute(
            "UPDATE tasks SET status = 'in-progress', pid = ?, host = ?, updated = ? "
            "WHERE id = ? AND status = 'pending'", (os.getpid(), socket.gethostname(), now_text(), task.id))
        if cursor.rowcount != 1:
            return False
        task.status, task.pid, task.host = "in-progress", os.getpid(), socket.gethostname()
        return True

    def finish(self, task: Task, success: bool, note: str, session_id: str | None) -> Task:
        """Record a run; a cron task becomes pending again with its next time."""
        task.runs += 1
        task.session_id = session_id or task.session_id
        task.notes = [*task.notes, note][-20:]
        task.updated, task.pid, task.host = now_text(), None, None
        if task.cron and task.status != "cancelled":
            task.status = "pending"
            task.due = parse_cron(task.cron).next_after(dt.datetime.now().astimezone()).timestamp()
        else:
            task.status = "completed" if success else "failed"
            task.completed = task.updated
        self._write(task)
        return task

    def reap(self) -> list[Task]:
        """Tasks whose running process is gone on this host are marked failed, saying so."""
        host, reaped = socket.gethostname(), []
        for task in self._select("WHERE status = 'in-progress'", ()):
            if task.host == host and task.pid is not None and not alive(task.pid):
                task.status, task.updated, task.completed = "failed", now_text(), now_text()
                task.notes = [*task.notes, f"the process running it (pid {task.pid}) ended before it finished"]
                task.pid = None
                self._write(task)
                reaped.append(task)
        return reaped

    def _write(self, task: Task) -> None:
        values = [getattr(task, name) for name in COLUMNS]
        values[COLUMNS.index("notes")] = json.dumps(task.notes)
        values[COLUMNS.index("payload")] = json.dumps(task.payload)
        try:
            self.db.execute(f"INSERT OR REPLACE INTO tasks VALUES ({', '.join('?' * len(COLUMNS))})", values)
        except sqlite3.Error as exc:
            raise TaskError(f"cannot write {self.path}: {exc}") from None

    def _select(self, where: str, args: tuple[Any, ...]) -> list[Task]:
        rows = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM tasks {where}", args).fetchall()
        tasks = []
        for row in rows:
            data = dict(zip(COLUMNS, row))
            data["notes"] = json.loads(data["notes"] or "[]")
            data["payload"] = json.loads(data["payload"] or "{}")
            data["action"] = data["action"] or "prompt"
            tasks.append(Task(**data))
        return tasks


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def task_store(workspace: Workspace) -> TaskStore:
    """The task store of a workspace (its map source's key), opened."""
    from agent.knowledge.source import source_for

    return TaskStore(source_for(workspace).key, workspace.label)


def prompt_section(workspace: Workspace) -> str:
    """The workspace's pending tasks for the system prompt, as the scratchpad is there: the agent
    knows what it has scheduled without calling list_tasks. Empty when there are none (a workspace
    that never had a task gets no store for it)."""
    from agent.knowledge.source import source_for

    key = source_for(workspace).key
    if not (knowledge_dir(key) / "tasks.sqlite3").exists():
        return ""
    try:
        store = TaskStore(key, workspace.label)
        try:
            pending = store.list("pending")
        finally:
            store.close()
    except sqlite3.Error:
        return ""  # the prompt works without it; `coder-tui tasks` says what is wrong with the store
    if not pending:
        return ""
    lines = [f"- {task.line()}" for task in pending[:PROMPT_TASKS]]
    if len(pending) > PROMPT_TASKS:
        lines.append(f"- ... and {len(pending) - PROMPT_TASKS} more (list_tasks shows them)")
    return ("\n## Your scheduled tasks (pending; they run later as their own sessions; cancel_task cancels one)\n"
            + "\n".join(lines) + "\n")
