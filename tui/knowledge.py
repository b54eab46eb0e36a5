"""The app's side of the codebase map, exploration and scheduled tasks (wiring for /map,
/explore and the task timer; the work itself is agent.knowledge)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.widgets import Input

from agent import events as ev
from agent.consumer import EventHandler
from tui.appcontext import later
from tui.widgets.codemap import CodeMap
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from agent.knowledge.explore import Explorer
    from agent.session.core import AgentSession
    from agent.workspaces.base import Workspace
    from tui.app import CoderApp

TASK_CHECK_SECONDS = 30.0


@dataclass
class ExploreRun:
    explorer: Explorer
    stop: asyncio.Event = field(default_factory=asyncio.Event)


def _say(app: CoderApp, text: str, kind: str = "info") -> None:
    app.query_one(Transcript).notice(text, kind)


def _ready(app: CoderApp, what: str) -> tuple[AgentSession, Workspace] | None:
    """The session and its workspace, or None (and why not is shown) while they do not exist."""
    if app.bridge.session is None or app.bridge.workspace is None:
        _say(app, f"{what} needs the agent to be ready; it is still loading or could not start.", "warning")
        return None
    return app.bridge.session, app.bridge.workspace


# -- the map pane ----------------------------------------------------------------------------------
async def toggle_map(app: CoderApp, query: str) -> None:
    pane = app.query_one(CodeMap)
    if pane.has_class("-shown") and not query:
        pane.remove_class("-shown")
        return
    if not _ready(app, "/map"):
        return
    pane.add_class("-shown")
    if app.screen.has_class("-narrow"):
        app.screen.add_class("-side-open")
    pane.query_one("#codemap-search", Input).value = query
    await reload_map(app)


async def reload_map(app: CoderApp) -> None:
    from agent.github.errors import GitHubError
    from agent.knowledge.builder import current_view
    from agent.knowledge.store import StoreError

    pane = app.query_one(CodeMap)
    if not pane.has_class("-shown") or app.bridge.workspace is None:
        return
    try:
        view = await current_view(app.bridge.workspace)
    except (StoreError, GitHubError, OSError) as exc:
        _say(app, f"the codebase map could not be read: {exc}", "error")
        return
    if view is not None:
        pane.show(view)


# -- exploration -----------------------------------------------------------------------------------
async def explore_command(app: CoderApp, arg: str) -> None:
    action, _, rest = arg.partition(" ")
    current = app.explore_run
    if action == "start":
        await _start(app, current, rest.strip())
    elif action == "stop":
        await _stop(app, current)
    elif action in ("", "status"):
        await _status(app, current)
    else:
        _say(app, f"unknown /explore {action}; use /explore start [SECONDS], stop or status", "error")


async def _stop(app: CoderApp, current: ExploreRun | None) -> None:
    """Stop the run and record that exploration is off (a restart does not resume it)."""
    from agent.knowledge.explore import set_wanted, set_workspace_wanted

    if current is None:
        if app.bridge.workspace is not None:
            set_workspace_wanted(app.bridge.workspace, False)
        _say(app, "exploration is not running; /explore start begins it")
        return
    set_wanted(current.explorer.store, False)
    current.stop.set()
    _say(app, "exploration stops after the current step", "dim")


async def resume_explore(app: CoderApp) -> None:
    """An app opened on a workspace whose exploration was on resumes it, saying so once."""
    from agent.knowledge.explore import workspace_wanted
    from agent.knowledge.store import StoreError

    if app.explore_run is not None or app.bridge.workspace is None:
        return
    try:
        state = workspace_wanted(app.bridge.workspace)
    except (StoreError, OSError) as exc:
        _say(app, f"could not read whether exploration was on: {exc}", "warning")
        return
    if state is not None and state["on"]:
        await _start(app, None, f"{state['interval']:g}", resumed=True)


def routed_explore(app: CoderApp, text: str) -> bool:
    """The router's start/stop of continuous exploration, acted on directly (True when it was one)."""
    from agent.planning.intents import detect

    intent = detect(text)
    if intent is None or intent.kind not in ("explore_start", "explore_stop"):
        return False
    app.show_prompt(text, [])
    action = "start" if intent.kind == "explore_start" else "stop"
    app.run_worker(explore_command(app, action), name="explore-intent", group="commands", exit_on_error=False)
    return True


async def _start(app: CoderApp, current: ExploreRun | None, interval_text: str, resumed: bool = False) -> None:
    from agent.config import ConfigError
    from agent.knowledge.explore import ExploreError, Explorer, set_wanted
    from agent.knowledge.summarize import summary_llm

    if current is not None:
        _say(app, "exploration is already running; /explore status shows how far it is")
        return
    ready = _ready(app, "/explore")
    if ready is None:
        return
    session, workspace = ready
    try:
        interval = float(interval_text) if interval_text else 120.0
        if interval < 0:
            raise ValueError
        llm = summary_llm(session.config)
    except ValueError:
        _say(app, f"/explore start SECONDS: expected a number of seconds, got {interval_text!r}", "error")
        return
    except ConfigError as exc:
        _say(app, f"/explore: {exc}", "error")
        return
    run = ExploreRun(Explorer(workspace, llm, _ExploreReports(app).handle))
    app.explore_run = run
    set_wanted(run.explorer.store, True, interval)  # on until /explore stop, across restarts

    async def explore() -> None:
        try:
            why = await run.explorer.run(interval, until_done=False, stop=run.stop)
            _say(app, f"Exploration {why} after {run.explorer.steps} step(s).", "dim")
        except ExploreError as exc:
            _say(app, f"/explore: {exc}", "error")
        finally:
            run.explorer.close()
            app.explore_run = None

    app.run_worker(explore(), name="explore", group="explore", exit_on_error=False)
    again = "Resuming continuous exploration (it was on when this workspace was last open): e" if resumed else "E"
    _say(app, f"{again}xploring {workspace.label} in the background, one step every {interval:g} s "
              "(/explore status, /explore stop; /map shows what it learns).", "dim")


async def _status(app: CoderApp, current: ExploreRun | None) -> None:
    if current is None:
        _say(app, "exploration is not running; /explore start begins it")
        return
    status = current.explorer.status()  # a few small queries; the store's connection belongs to this thread
    last = status["last"] or {}
    _say(app, f"Exploring: {status['summarised']} of {status['files']} files summarised, {status['pending']} "
              f"to go, {status['folders']} folder(s) explored; last step: {last.get('step', '-')} "
              f"{last.get('path', '')}".rstrip())


class _ExploreReports(EventHandler):
    """The explorer's reports in the app: a step reloads the map; idle, wait and failure notes are said."""

    def __init__(self, app: CoderApp) -> None:
        self.app = app

    def on_explore_step(self, event: ev.ExploreStep) -> None:
        self.app.run_worker(later(reload_map, self.app), group="codemap", exclusive=True, exit_on_error=False)

    def on_explore_error(self, event: ev.ExploreStepFailed) -> None:
        _say(self.app, event.text, "warning")

    def on_explore_idle(self, event: ev.ExploreIdle) -> None:
        _say(self.app, event.text, "dim")

    def on_explore_wait(self, event: ev.ExploreWait) -> None:
        _say(self.app, event.text, "dim")


# -- scheduled tasks ----------------------------------------------------------------------------------
def start_task_timer(app: CoderApp) -> None:
    """Run due scheduled tasks while the app is open and the agent idle."""
    app.set_interval(TASK_CHECK_SECONDS, lambda: _check_tasks(app), name="tasks")


def _check_tasks(app: CoderApp) -> None:
    session, workspace = app.bridge.session, app.bridge.workspace
    if session is None or workspace is None or app.bridge.running or app.tasks_running:
        return
    app.tasks_running = True

    async def run() -> None:
        from agent.session.tasks import run_due

        try:
            await run_due(workspace, session.config, lambda text: _say(app, text, "dim"))
        finally:
            app.tasks_running = False

    app.run_worker(run(), name="tasks", group="tasks", exit_on_error=False)
