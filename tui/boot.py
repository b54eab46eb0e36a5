"""What the app does after its first frame: load the agent core, the config, the workspace.

Runs as a worker so the layout is on screen (and typing works) while the core imports, the
config loads, a GitHub clone progresses or a room is joined. Prompts typed meanwhile are sent
once the session exists.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any, cast

from tui.modelload import core_imported, start_model_library

if TYPE_CHECKING:
    from argparse import Namespace
    from pathlib import Path

    from agent.config import Config
    from agent.oct.client import RoomClient
    from agent.session.target import Target, TargetError
    from tui.app import CoderApp
    from tui.ports import BootHost
    from tui.screens.setup import SetupResult

RESUME_FIX = "Quit (Ctrl+Q) and start again; `coder-tui sessions` lists them."


def flags_of(options: Namespace) -> dict[str, Any]:
    return {"model": options.model, "api_base": options.api_base, "api_key": options.api_key,
            "mode": options.mode, "sandbox": getattr(options, "sandbox", None),
            "profile": getattr(options, "profile", None),
            "workflow": getattr(options, "workflow", None), "reasoning": getattr(options, "reasoning", None)}


async def load_config(app: BootHost, root: Path | None) -> Config | None:
    """The merged config, after the setup screen when no usable model is configured (None: give up)."""
    from agent.config import ConfigError
    from agent.config import load_config as load

    flags = flags_of(app.options)
    try:
        config = await _trusted_config(app, root, flags)
    except ConfigError as exc:
        app.fatal(f"configuration error: {exc}", "Fix it, then quit (Ctrl+Q) and start again.")
        return None
    from tui.screens.setup import SetupScreen, needs_setup

    why = needs_setup(config, os.environ)
    if why is None:
        return config
    result = await app.push_screen_wait(SetupScreen(config, os.environ, why))
    if result is None:  # the setup screen's Quit: without a model there is nothing to do here
        app.exit(0)
        return None
    return await _reload(app, root, result)


async def _trusted_config(app: BootHost, root: Path | None, flags: dict[str, Any]) -> Config:
    """The config, after asking whether to trust the folder when its own files wanted more than an
    untrusted folder may have. The answer, either way, is remembered (agent/workspace_input/trust.py);
    what stays left out the session says as warnings."""
    from agent.config import load_config as load
    from agent.workspace_input import trust

    if root is not None and getattr(app.options, "trust", False):
        await asyncio.to_thread(trust.remember, root, True)
    config = await asyncio.to_thread(load, root, flags)
    if root is None or config.workspace_trusted:
        return config
    wanted = await asyncio.to_thread(_wanted, root, config)
    if not wanted or (await asyncio.to_thread(trust.decision, root)).trusted is False:
        return config  # nothing to ask, or asked before and declined
    from tui.screens.trust import TrustScreen

    answered: bool = await app.push_screen_wait(TrustScreen(root, wanted))
    answer = bool(answered)  # None when the screen closed without an answer
    await asyncio.to_thread(trust.remember, root, answer)
    if not answer:
        return config
    app.notice(f"trusted {root}: its own files apply in full", "success")
    return await asyncio.to_thread(load, root, flags)


def _wanted(root: Path, config: Config) -> list[Any]:
    """What the folder's own files ask for that only trust gives (its config file's and profiles')."""
    from agent.profiles import ProfileError, workspace_profiles

    try:
        profiles = workspace_profiles(root, False, config.mode)[1]
    except ProfileError:  # the session says what is wrong with the file when it opens
        profiles = []
    return [item for item in [*config.ignored, *profiles] if item.trust_would_help]


async def _reload(app: BootHost, root: Path | None, result: SetupResult) -> Config:
    """The config after the setup screen saved a choice (a key not saved is used for this run)."""
    from agent.config import load_config as load

    flags = {**flags_of(app.options), "model": result.model, "api_base": result.api_base}
    if result.api_key is not None and not result.key_saved:
        flags["api_key"] = result.api_key.get_secret_value()
    return await asyncio.to_thread(load, root, flags)


async def apply_setup(app: BootHost, reason: str = "choose the model, server and key") -> None:
    """/setup, or a model the provider or litellm rejected: choose again; the session (or, when
    none could start, the boot) takes it up."""
    from tui.screens.setup import SetupScreen

    if any(isinstance(screen, SetupScreen) for screen in app.screen_stack):
        return  # already choosing (a failed check and a failed run can both ask)
    workspace = app.bridge.workspace
    result = await app.push_screen_wait(SetupScreen(app.config, os.environ, reason))
    if result is None:
        return
    app.config = config = await _reload(app, workspace.root if workspace is not None else None, result)
    if app.bridge.session is None:
        app.restart_boot()
        return
    app.bridge.session.reconfigure(config)
    app.show_model(config.model or "")
    app.notice(f"model: {config.model}", "success")


async def boot(app: BootHost) -> None:
    """Core, config, workspace, session, then the model library in the background."""
    options = app.options
    await app.load_user_themes()
    await core_imported()  # started with the first frame (tui/modelload.py)
    if getattr(options, "attach", None) is not None:  # `coder-tui attach [ID]`: the session is the host's
        from tui.attaching import boot_attached

        if await boot_attached(cast("CoderApp", app)):
            return
    from agent.profiles import ProfileError
    from agent.session.record import SessionError

    # a model named on the command line that needs litellm starts its import now (else once the config is read)
    start_model_library(getattr(options, "model", None) or os.environ.get("CODER_TUI_MODEL"),
                        getattr(options, "api_base", None) or os.environ.get("CODER_TUI_API_BASE"))
    opener = _open_room if options.room else _open_github if options.github else _open_local
    try:
        config = await opener(app)
    except SessionError as exc:
        app.fatal(f"--resume: {exc}", RESUME_FIX)
        return
    except ProfileError as exc:
        app.fatal(f"profile: {exc}", "Quit (Ctrl+Q) and start again with another --profile; "
                  "`coder-tui profiles` lists them.")
        return
    session = app.bridge.session
    if config is None or session is None:
        return
    app.config = config
    app.apply_keymap(config.keymap)
    if not options.mode and config.mode != app.mode:  # the config's mode (user, or a trusted folder)
        app.set_mode(config.mode)
    app.session_opened(session)
    app.run_task(_check_model(app, config), name="check-model")
    if app.bridge.room is not None:
        app.bridge.room.start(app)


async def _check_model(app: BootHost, config: Config) -> None:
    """An unknown provider is a configuration error: the setup screen, before the first prompt.
    (For a model on the litellm path the check needs litellm, loading meanwhile; a prompt sent
    before it answers fails with the same message, and setup opens once.)"""
    from agent.llm import configuration_problem

    problem = await configuration_problem(config.model or "", config.api_base, config.model_path)
    if problem is not None:
        app.notice(problem, "error")
        await apply_setup(app, problem)


async def _open_local(app: BootHost) -> Config | None:
    target = await _open(app, None)
    if target is None:
        return None
    app.bridge.attach_target(target)
    config = await load_config(app, target.workspace.root)  # the folder's own config file, once trusted
    if config is not None:
        app.bridge.open_session(config, app.options.resume)
    return config


async def _open_github(app: BootHost) -> Config | None:
    config = await load_config(app, None)
    if config is None:
        return None
    app.show_progress("Opening " + app.options.github)
    try:
        target = await _open(app, config)
    finally:
        app.show_progress(None)
    if target is None:
        return None
    app.bridge.attach_target(target)
    app.bridge.open_session(config, app.options.resume)
    if target.prompt:  # --issue N: the issue is the task
        app.call_later(app.send_prompt, target.prompt)
    return config


async def _open_room(app: BootHost) -> Config | None:
    config = await load_config(app, None)
    if config is None:
        return None
    target = await _open(app, config)
    if target is None:
        return None
    app.bridge.attach_target(target)
    app.bridge.open_session(config, app.options.resume)
    return config


async def _open(app: BootHost, config: Config | None) -> Target | None:
    """The target the options name (agent/session/target.py); None when it cannot be opened, and why is shown.

    A room's pane follows its client from before the join; its events and a clone's progress are
    shown as they come.
    """
    from agent.session.target import TargetError, TargetSpec, open_target
    from tui.roomlink import RoomLink

    def watch_room(client: RoomClient) -> None:
        app.bridge.link_room(RoomLink(client, app.refresh_pane))
        app.refresh_pane()

    options = app.options
    try:
        return await open_target(TargetSpec.from_options(options), config, emit=app.show_event,
                                 progress=app.github_progress, watch_room=watch_room)
    except TargetError as exc:
        if app.bridge.room is not None:
            app.bridge.room.join_failed(exc.reason)
        app.fatal(*_failure(options, exc))
        return None


def _failure(options: Namespace, exc: TargetError) -> tuple[str, str]:
    """What could not be opened, and what to do: quit first (the app stays open to read it)."""
    from agent.session.target import RESUME_HINT

    if exc.hint == RESUME_HINT:
        return exc.message, RESUME_FIX
    if not options.room and not options.github:
        return (f"cannot open {options.workspace}: {exc.reason}",
                "Quit (Ctrl+Q) and start coder-tui on a folder you can read.")
    return exc.message, f"Quit (Ctrl+Q), {exc.hint}."
