"""`coder-tui map` and `coder-tui tasks`: the map and the task list without the UI.

Readable output goes to stderr (progress bar) and stdout (the result); with --json every line
on stdout is one JSON event. Exit codes: 0 done, 1 stopped or failed, 2 usage or configuration.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from agent import events as ev
from agent.consumer import EventHandler
from agent.frontends.common import UsageError, open_or_usage


class Reporter(EventHandler):
    """Progress and notices: a bar on stderr (readable), or JSON lines on stdout. The map's and the
    explorer's reports arrive as typed events; the final results (map_done, explore_done, tasks) as dicts."""

    def __init__(self, as_json: bool, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.as_json = as_json
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._bar = False

    def event(self, event: ev.Event | dict[str, Any]) -> None:
        if self.as_json:
            shown = event if isinstance(event, dict) else event.model_dump(mode="json")
            print(json.dumps(shown), file=self.out, flush=True)
        elif isinstance(event, dict):
            if "text" in event:
                self.notice(event["text"])
        else:
            self.handle(event)

    def on_map_progress(self, event: ev.MapProgress) -> None:
        self._progress(event.phase, event.done, event.total, event.path)

    def on_explore_progress(self, event: ev.ExploreProgress) -> None:
        self._progress(event.phase, event.done, event.total, event.path)

    def unhandled(self, event: ev.Event) -> None:
        if isinstance(text := getattr(event, "text", None), str):
            self.notice(text)

    def notice(self, text: str) -> None:
        if self.as_json:
            print(json.dumps({"type": "notice", "text": text}), file=self.out, flush=True)
            return
        self._end_bar()
        print(text, file=self.err, flush=True)

    def result(self, text: str) -> None:
        self._end_bar()
        if not self.as_json:
            print(text, file=self.out, flush=True)

    def _progress(self, phase: str, done: int, count: int, path: str) -> None:
        total = max(1, count)
        width = 30
        filled = width * done // total
        line = f"{phase} [{'#' * filled}{'.' * (width - filled)}] {done}/{count} {path}"
        if self.err.isatty():
            print(f"\r{line[:100]:<100}", end="", file=self.err, flush=True)
            self._bar = True
        elif done == count or done % max(1, total // 10) == 0:
            print(line, file=self.err, flush=True)

    def _end_bar(self) -> None:
        if self._bar:
            print(file=self.err, flush=True)
            self._bar = False


async def open_workspace(options: Any, reporter: Reporter) -> tuple[Any, Any]:
    """(workspace, config) for DIR or --github R [--clone]; a GitHub workspace keeps its launch
    as `workspace.launch` (tools and session recording for tasks)."""
    from agent.session.target import TargetSpec

    github = getattr(options, "github", None)
    clone = bool(getattr(options, "clone", False))
    if clone and not github:
        raise UsageError("--clone needs --github OWNER/REPO")
    config = load_options_config(options, None) if github else None
    target = await open_or_usage(TargetSpec(workspace=options.workspace or ".", github=github, clone=clone),
                                 config, emit=lambda event: reporter.notice(_waiting(event)),
                                 notice=reporter.notice)
    if target.github is not None:
        target.workspace.launch = target.github
        return target.workspace, config
    return target.workspace, load_options_config(options, target.workspace.root)


def _waiting(event: Any) -> str:
    """A GitHub rate-limit wait, as a notice."""
    return f"{event.why} (waiting {event.delay:g} s)"


def load_options_config(options: Any, root: Any) -> Any:
    """The config with this command's flags on top (a model is checked only where one is needed)."""
    from agent.config import ConfigError, load_config

    flags = {name: getattr(options, name, None) for name in ("model", "api_base", "api_key", "mode")}
    try:
        return load_config(root, flags)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def summary_llm(config: Any) -> Any:
    from agent.config import ConfigError
    from agent.knowledge.summarize import summary_llm as small_model

    try:
        return small_model(config)
    except ConfigError as exc:
        raise UsageError(f"{exc} (or set small_model; `map --no-summaries` needs no model)") from None


async def run_map(options: Any) -> int:
    from agent.knowledge.builder import MapBuilder

    if options.max_cost is not None and options.max_cost <= 0:
        raise UsageError("--max-cost must be more than 0")
    reporter = Reporter(options.json)
    workspace, config = await open_workspace(options, reporter)
    llm = None if options.no_summaries else summary_llm(config)
    builder = MapBuilder(workspace, llm, reporter.event)
    try:
        report = await builder.build(summaries=not options.no_summaries, max_cost=options.max_cost)
    finally:
        builder.close()
        await workspace.close()
    done = report.to_json()
    done["store"] = str(builder.store.path)
    if options.json:
        reporter.event(done)
    else:
        reporter.result(describe(report, str(builder.store.path)))
    return 1 if report.stopped or report.failed else 0


def describe(report: Any, store: str) -> str:
    r = report.refresh
    lines = [f"Mapped {r.files} file(s): {len(r.added)} new, {len(r.changed)} changed, {len(r.removed)} removed, "
             f"{r.parsed} parsed."]
    if report.planned or report.summarised:
        cost = f" (${report.cost:.4f})" if report.cost is not None else ""
        lines.append(f"Summarised {len(report.summarised)} of {report.planned} file(s){cost}.")
    for path, why in report.failed.items():
        lines.append(f"Not summarised: {path}: {why}")
    if report.stopped:
        lines.append(f"Stopped: {report.stopped}")
    lines.append(f"Map store: {store}")
    return "\n".join(lines)


async def run_tasks(options: Any) -> int:
    from agent.session.tasks import run_due, task_store
    from agent.knowledge.tasks import TaskError

    reporter = Reporter(options.json)
    workspace, config = await open_workspace(options, reporter)
    try:
        if options.action == "run-due":
            config.require_model()
            finished = await run_due(workspace, config, reporter.notice, github=getattr(workspace, "launch", None))
            if options.json:
                for task in finished:
                    reporter.event({"type": "task_finished", **task.to_json()})
            reporter.result(f"{len(finished)} task(s) run." if finished else "No task is due.")
            return 0 if all(t.status != "failed" for t in finished) else 1
        store = task_store(workspace)
        try:
            if options.action == "cancel":
                task = store.cancel(options.task_id or "")
                reporter.result(f"Cancelled {task.line()}")
                return 0
            tasks = store.list(options.status)
        finally:
            store.close()
    except TaskError as exc:
        raise UsageError(str(exc)) from None
    finally:
        await workspace.close()
    for task in tasks:
        if options.json:
            reporter.event({"type": "task", **task.to_json()})
        else:
            reporter.result(task.line())
    if not tasks:
        reporter.result("No tasks.")
    return 0


def main(run: Callable[[Any], Any], options: Any) -> int:
    from agent.config import ConfigError

    from agent.knowledge.store import take_notices

    try:
        return asyncio.run(run(options))
    except (UsageError, ConfigError) as exc:
        print(f"coder-tui: error: {exc}", file=sys.stderr)
        return 2
    finally:
        for note in take_notices():  # a damaged map store was set aside
            print(f"coder-tui: warning: {note}", file=sys.stderr)


async def run_explore(options: Any) -> int:
    from agent.knowledge.explore import ExploreError, Explorer
    from agent.session.tasks import run_due

    if options.interval < 0:
        raise UsageError("--interval must be 0 or more seconds")
    reporter = Reporter(options.json)
    workspace, config = await open_workspace(options, reporter)
    llm = summary_llm(config)

    async def due_tasks() -> None:
        await run_due(workspace, config, reporter.notice, github=getattr(workspace, "launch", None))

    explorer = Explorer(workspace, llm, reporter.event, due_tasks if config.model else None)
    stop = asyncio.Event()
    _stop_on_signals(stop, reporter)
    try:
        why = await explorer.run(options.interval, options.until_done, stop)
        status = explorer.status()
    except ExploreError as exc:
        raise UsageError(str(exc)) from None
    finally:
        explorer.close()
        await workspace.close()
    text = (f"Exploration {why} after {explorer.steps} step(s): {status['summarised']} of {status['files']} "
            "file(s) summarised.")
    if options.json:
        reporter.event({**status, "type": "explore_done", "reason": why, "steps": explorer.steps, "text": text})
    else:
        reporter.result(text)
    return 1 if why.startswith("stopped:") else 0


def _stop_on_signals(stop: asyncio.Event, reporter: Reporter) -> None:
    import signal

    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        if not stop.is_set():
            reporter.notice("stopping after the current step…")
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
        except (NotImplementedError, RuntimeError):
            pass
