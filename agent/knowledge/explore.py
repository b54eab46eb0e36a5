"""Continuous exploration (seed 001's continuous run, made durable).

Each cycle plans the next single step from what the store knows: the root folder first, then
the important top-level folders, then unsummarised files, most referenced first. It runs that
step, commits its result, and waits for the next cycle; due tasks run between steps. Nothing
lives only in memory: killed at any point, the next start plans from the store again, so no
finished step is done twice. On GitHub a rate limit is waited out, saying until when.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.events import ExploreIdle, ExploreProgress, ExploreStep, ExploreStepFailed, ExploreWait
from agent.github.errors import BinaryFile, NotFound
from agent.knowledge.builder import MapBuilder
from agent.knowledge.store import FileRecord
from agent.knowledge.summarize import SummaryError
from agent.knowledge.tasks import alive
from agent.llm import LLM, LLMError
from agent.workspaces.base import Workspace

Emit = Callable[[ExploreStep | ExploreStepFailed | ExploreIdle | ExploreProgress | ExploreWait], None]
ROOM_REFRESH_STEPS = 10  # a room's files are read through the host: look for changes every 10 plans
IDLE_SECONDS = 30.0  # when everything is current, how often to look for changes
IMPORTANT = ("src", "lib", "app", "agent", "core", "pkg", "cmd", "internal", "packages", "server", "api")


@dataclass(frozen=True)
class Step:
    kind: str  # "folder" or "summarise"
    path: str

    def describe(self) -> str:
        return f"explore folder {self.path or '/'}" if self.kind == "folder" else f"summarise {self.path}"


class Explorer:
    def __init__(self, workspace: Workspace, llm: LLM, emit: Emit | None = None,
                 run_tasks: Callable[[], Any] | None = None) -> None:
        self.builder = MapBuilder(workspace, llm)
        self.store = self.builder.store
        self.emit = emit or (lambda event: None)
        self.run_tasks = run_tasks  # awaited between steps: runs due scheduled tasks
        self.steps = 0
        self._plans = 0

    def close(self) -> None:
        self.builder.close()

    # -- planning -------------------------------------------------------------------------------
    def plan(self) -> Step | None:
        records = self.store.files()
        explored = self.store.explored_dirs()
        for folder in ["", *important_folders(records)]:
            if folder not in explored:
                return Step("folder", folder)
        failed = set(self.store.get_meta("explore.failed") or [])
        pending = [p for p in self.builder.pending(records) if records[p].sha not in failed]
        return Step("summarise", pending[0]) if pending else None

    async def step(self) -> Step | None:
        """Plan and run one step; None when everything is current."""
        self._plans += 1
        if self.builder.source.cheap_listing or self._plans % ROOM_REFRESH_STEPS == 1:
            await self.builder.refresh()
        step = self.plan()
        if step is None:
            return None
        self.emit(ExploreStep(kind=step.kind, path=step.path, text=f"{step.describe()}{self._folder_note(step)}"))
        if step.kind == "folder":
            self.store.mark_dir(step.path, _now())
        else:
            try:
                await self.builder.summarise_one(step.path)
            except (SummaryError, BinaryFile, NotFound) as exc:  # this file only: remember, go on
                self._failed(step.path, str(exc))
        self.steps += 1
        self.store.set_meta("explore.last", {"step": step.kind, "path": step.path, "at": _now()})
        return step

    def _folder_note(self, step: Step) -> str:
        if step.kind != "folder":
            return ""
        prefix = f"{step.path}/" if step.path else ""
        languages: dict[str, int] = {}
        inside = [r for p, r in self.store.files().items() if p.startswith(prefix)]
        for record in inside:
            languages[record.language or "other"] = languages.get(record.language or "other", 0) + 1
        kinds = ", ".join(f"{count} {name}" for name, count in sorted(languages.items(), key=lambda x: -x[1]))
        return f": {len(inside)} file(s) ({kinds})" if inside else ": empty"

    def _failed(self, path: str, why: str) -> None:
        sha = self.store.files()[path].sha
        self.store.set_meta("explore.failed", [*(self.store.get_meta("explore.failed") or []), sha][-1000:])
        self.emit(ExploreStepFailed(path=path, text=f"could not summarise {path}: {why}"))

    def status(self) -> dict[str, Any]:
        records = self.store.files()
        done = self.store.summarised_shas()
        return {"type": "explore_status", "files": len(records),
                "summarised": sum(1 for r in records.values() if r.sha in done),
                "pending": len(self.builder.pending(records)), "folders": len(self.store.explored_dirs()),
                "last": self.store.get_meta("explore.last"), "running_pid": self.running_pid()}

    # -- the loop -------------------------------------------------------------------------------
    def running_pid(self) -> int | None:
        pid = self.store.get_meta("explore.pid")
        return pid if isinstance(pid, int) and pid != os.getpid() and alive(pid) else None

    async def run(self, interval: float, until_done: bool, stop: asyncio.Event | None = None) -> str:
        """Explore until stopped (or, with until_done, until everything is current); says why it ended."""
        stop = stop or asyncio.Event()
        other = self.running_pid()
        if other is not None:
            raise ExploreError(f"another explore (pid {other}) is already running for this repository")
        self.store.set_meta("explore.pid", os.getpid())
        try:
            return await self._loop(interval, until_done, stop)
        finally:
            self.store.set_meta("explore.pid", None)

    async def _loop(self, interval: float, until_done: bool, stop: asyncio.Event) -> str:
        from agent.github.errors import GitHubError, RateLimited

        idle = False
        while not stop.is_set():
            if self.run_tasks is not None:
                await self.run_tasks()
            try:
                step = await self.step()
            except RateLimited as exc:
                await self._wait_out(exc, stop)
                continue
            except (GitHubError, LLMError) as exc:
                return f"stopped: {exc}"
            if step is None:
                if until_done:
                    return "everything is current"
                if not idle:
                    self.emit(ExploreIdle(text=f"everything is current; checking for changes "
                                               f"every {max(interval, IDLE_SECONDS):g} s"))
                idle = True
                await _wait(stop, max(interval, IDLE_SECONDS))
                continue
            idle = False
            status = self.status()
            self.emit(ExploreProgress(**{k: v for k, v in status.items() if k != "type"}, done=status["summarised"],
                                      total=status["files"], path=step.path))
            await _wait(stop, interval)
        return "stopped"

    async def _wait_out(self, exc: Any, stop: asyncio.Event) -> None:
        seconds = max(1.0, exc.reset_at.timestamp() - time.time())
        clock = exc.reset_at.astimezone().strftime("%H:%M:%S")
        self.emit(ExploreWait(seconds=round(seconds),
                              text=f"GitHub rate limit reached; waiting until {clock} ({seconds:.0f} s)"))
        await _wait(stop, seconds)


WANTED = "explore.wanted"  # the map store's meta: {"on": bool, "interval": seconds}, kept across restarts


def wanted(store: Any) -> dict[str, Any] | None:
    """The durable on/off state of continuous exploration (None when never set, or malformed)."""
    value = store.get_meta(WANTED)
    if not isinstance(value, dict) or not isinstance(value.get("on"), bool):
        return None
    interval = value.get("interval")
    return {"on": value["on"], "interval": float(interval) if isinstance(interval, (int, float)) else 120.0}


def set_wanted(store: Any, on: bool, interval: float | None = None) -> None:
    """Record that exploration is on (with its interval) or off, for the next app on this workspace."""
    before = wanted(store) or {}
    store.set_meta(WANTED, {"on": on, "interval": interval if interval is not None else before.get("interval", 120.0)})


def workspace_wanted(workspace: Workspace) -> dict[str, Any] | None:
    """The durable exploration state of a workspace's map store."""
    from agent.knowledge.source import source_for
    from agent.knowledge.store import MapStore

    store = MapStore(source_for(workspace).key)
    try:
        return wanted(store)
    finally:
        store.close()


def set_workspace_wanted(workspace: Workspace, on: bool) -> None:
    from agent.knowledge.source import source_for
    from agent.knowledge.store import MapStore

    store = MapStore(source_for(workspace).key)
    try:
        set_wanted(store, on)
    finally:
        store.close()


class ExploreError(Exception):
    """Exploration cannot start; the message says why."""


def important_folders(records: dict[str, FileRecord]) -> list[str]:
    """Top-level folders: well-known source folders first, then by how many files they hold."""
    counts: dict[str, int] = {}
    for path in records:
        if "/" in path:
            top = path.split("/", 1)[0]
            counts[top] = counts.get(top, 0) + 1
    return sorted(counts, key=lambda d: (d not in IMPORTANT, -counts[d], d))


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        pass


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
