"""What the app does after its first frame: the side panel, the presenter, timers and the agent's
boot, then the session it opens. Kept out of tui/app.py, which is wiring only."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from tui.pathfmt import home_relative
from tui.widgets.statusbar import LOADING_MODELS, StatusBar
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from agent.session.core import AgentSession
    from tui.app import CoderApp
    from tui.widgets.livediff import LiveDiff


async def first_frame_shown(app: CoderApp) -> None:
    from tui.modelload import start_core_import
    from tui.themes import register_builtin_themes

    start_core_import()  # beside the rest of the layout; boot waits for it
    await mount_prompt(app)
    register_builtin_themes(app)
    await compose_side(app)
    # What exists now lives as long as the app: freeze it; full collections wait for pauses.
    app.gc_policy.start()
    app.set_interval(1.0, app.gc_policy.tick, name="gc")
    from tui.knowledge import start_task_timer

    start_task_timer(app)
    app.start_boot()


async def mount_prompt(app: CoderApp) -> None:
    """The real prompt in place of the first frame's stand-in (tui/widgets/prompt_standin.py),
    with the keys typed so far. It draws the same: the screen does not change."""
    from agent import paths
    from tui.widgets.prompt import PromptInput
    from tui.widgets.prompt_standin import PromptStandIn

    stand_in = app.query_one(PromptStandIn)
    prompt = PromptInput(history_path=paths.prompt_history_file(), commands=app.slash_commands(), id="prompt")
    with app.batch_update():
        await app.query_one("#main").mount(prompt, after=stand_in)
        await stand_in.hand_over(prompt)


async def compose_side(app: CoderApp) -> None:
    """The side panel's timeline and pane, and the presenter that fills them and the chat: both
    empty until the agent runs, they would only delay the first frame."""
    from tui.presenter import Presenter
    from tui.widgets.codemap import CodeMap
    from tui.widgets.panes import WorkspacePane
    from tui.widgets.timeline import Timeline

    timeline = Timeline(id="timeline")
    timeline.border_title = "Plan · timeline"
    await app.query_one("#side").mount(timeline, CodeMap(id="codemap"), WorkspacePane(id="pane"))
    presenter = Presenter(app.query_one("#transcript", Transcript), timeline, app.query_one("#status", StatusBar),
                          app.key_argument)
    presenter.on_files_changed = lambda event, approved: app.live_diff().landed(event, approved)
    presenter.on_run_start = lambda event: _run_started(app)
    presenter.on_restored = lambda event: _run_started(app)  # what the strip shows is undone
    presenter.on_run_end = lambda event: app.agent_idle()
    presenter.on_room = lambda event: app.refresh_pane()
    app.presenter = presenter


def _run_started(app: CoderApp) -> None:
    """The edits the strip shows are no longer news (a new request) or no longer there (a restore)."""
    for strip in app.query("#livediff"):  # only once it was shown (its module loads then)
        cast("LiveDiff", strip).new_run()


def session_opened(app: CoderApp, session: AgentSession) -> None:
    from tui.replay import replay

    status = app.query_one("#status", StatusBar)
    label = session.workspace.label
    status.set_workspace(home_relative(label) if session.workspace.root is not None else label)
    status.set_model(session.model or "")
    status.set_reasoning(session.reasoning)
    status.set_profile(session.agent.profile.name)
    if session.agent.profile.mode:  # the profile's own mode (architect: plan), unless --mode said otherwise
        app.set_mode(session.mode)
    if session.restored is not None:
        for welcome in app.query(".-welcome"):  # a first-launch hint, not a line after the conversation
            welcome.remove()
        mode = replay(session.restored, app.presenter, app.query_one("#transcript", Transcript), app.options.mode)
        if mode:
            app.set_mode(mode)
    app.bridge.set_mode(app.mode)  # the bridge's session is this one
    from agent.llm.preload import litellm_loading
    from tui.modelload import start_model_library

    config = session.config
    if start_model_library(config.model, config.api_base, config.model_path) and litellm_loading():
        status.set_state(LOADING_MODELS)
        app.run_task(_idle_once_loaded(app), name="load-models")
    else:
        status.set_state("idle")
    app.refresh_pane()
    app.load_files()
    from tui.widgets.prompt import PromptInput

    for prompt in app.query("#prompt").results(PromptInput):  # once mounted; else it is mounted with them
        prompt.set_commands(app.slash_commands())
    app.bridge.session_ready()
    from tui.knowledge import resume_explore

    app.run_worker(resume_explore(app), name="explore-resume", group="explore-resume", exit_on_error=False)


async def _idle_once_loaded(app: CoderApp) -> None:
    """The status bar says idle once litellm is loaded (the session's model needs it)."""
    from agent.llm.preload import start_loading

    try:
        await asyncio.wrap_future(start_loading())
    except Exception:  # noqa: BLE001 - the first run loads it again and reports the problem
        pass
    status = app.query_one("#status", StatusBar)
    if status.state == LOADING_MODELS:  # a run started meanwhile owns the state
        status.set_state("idle")


def apply_keymap(app: CoderApp, keymap: dict[str, str]) -> None:
    """Remapped keys from config.toml's [keymap] (binding id -> keys); unknown ids are named."""
    if not keymap:
        return
    from tui.screens.keys import binding_rows

    known = {row[2] for row in binding_rows()}
    unknown = sorted(set(keymap) - known)
    if unknown:
        app.notice(
            f"config [keymap]: no binding with id {', '.join(unknown)} (F1 lists the ids)", "warning")
    app.set_keymap({k: v for k, v in keymap.items() if k in known})


def list_files(app: CoderApp) -> None:
    """The workspace's files for @ completion (in a thread: a big tree must not stall the UI)."""
    import asyncio

    workspace = app.bridge.workspace
    if workspace is None and app.bridge.driver is not None and (root := app.bridge.driver.root) is not None:
        from agent.workspaces.base import WorkspaceError
        from agent.workspaces.local import LocalWorkspace

        try:
            workspace = LocalWorkspace(root)  # attached: the host's session works in this folder
        except WorkspaceError:
            return  # @ completion is a convenience; it stays empty
    if workspace is None or workspace.kind == "room":
        return
    try:
        files = asyncio.run(workspace.list_files(""))
    except Exception:  # noqa: BLE001 - @ completion is a convenience; it stays empty
        return
    from tui.widgets.prompt import PromptInput

    app.call_from_thread(app.query_one("#prompt", PromptInput).set_files, files)
