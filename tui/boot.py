"""What the app does after its first frame: load the agent core, the config, the workspace.

Runs as a worker so the layout is on screen (and typing works) while the core imports, the
config loads, a GitHub clone progresses or a room is joined. Prompts typed meanwhile are sent
once the session exists.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from argparse import Namespace
    from pathlib import Path

    from agent.config import Config
    from tui.ports import BootHost
    from tui.screens.setup import SetupResult


def _import_core() -> None:
    import agent.runner  # noqa: F401 - the agent core: events, tools, workspaces, sessions
    import agent.workspaces.local  # noqa: F401


def _prewarm_litellm() -> None:
    from agent.llm import prewarm

    try:
        prewarm()  # also freezes the model library's objects out of full collections
    except Exception:  # noqa: BLE001 - the first run imports it again and reports the problem
        return


def flags_of(options: Namespace) -> dict[str, Any]:
    return {"model": options.model, "api_base": options.api_base, "api_key": options.api_key,
            "mode": options.mode, "sandbox": getattr(options, "sandbox", None),
            "profile": getattr(options, "profile", None),
            "workflow": getattr(options, "workflow", None)}


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
    """The config, after asking whether to trust the folder when its own file wanted more."""
    from agent.config import load_config as load
    from agent.config import trust_folder

    if root is not None and getattr(app.options, "trust", False):
        await asyncio.to_thread(trust_folder, root)
    config = await asyncio.to_thread(load, root, flags)
    if not config.ignored or root is None:  # only a workspace's own file is ever ignored
        return config
    from tui.screens.trust import TrustScreen

    if await app.push_screen_wait(TrustScreen(root, config.ignored)):
        await asyncio.to_thread(trust_folder, root)
        app.notice(f"trusted {root}: its .coder-tui.toml applies in full", "success")
        return await asyncio.to_thread(load, root, flags)
    for item in config.ignored:
        app.notice(f"ignored {item} (the folder is not trusted)", "warning")
    return config


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
    await asyncio.to_thread(_import_core)
    from agent.profiles import ProfileError
    from agent.session import SessionError

    threading.Thread(target=_prewarm_litellm, name="load-litellm", daemon=True).start()
    opener = _open_room if options.room else _open_github if options.github else _open_local
    try:
        config = await opener(app)
    except SessionError as exc:
        app.fatal(f"--resume: {exc}", "Quit (Ctrl+Q) and start again; `coder-tui sessions` lists them.")
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
    app.run_task(_check_model(app, config.model or ""), name="check-model")
    if app.bridge.room is not None:
        app.bridge.room.start(session, app)


async def _check_model(app: BootHost, model: str) -> None:
    """An unknown provider is a configuration error: the setup screen, before the first prompt.
    (The check needs litellm, loading meanwhile; a prompt sent before it answers fails with the
    same message, and setup opens once.)"""
    from agent.llm import configuration_problem

    problem = await configuration_problem(model)
    if problem is not None:
        app.notice(problem, "error")
        await apply_setup(app, problem)


async def _open_local(app: BootHost) -> Config | None:
    from agent.workspaces.base import WorkspaceError
    from agent.workspaces.local import LocalWorkspace

    try:
        workspace = LocalWorkspace(app.options.workspace)
    except WorkspaceError as exc:
        app.fatal(f"cannot open {app.options.workspace}: {exc}",
                  "Quit (Ctrl+Q) and start coder-tui on a folder you can read.")
        return None
    app.bridge.attach_target(workspace)
    config = await load_config(app, workspace.root)
    if config is not None:
        app.bridge.open_session(config, app.options.resume)
    return config


async def _open_github(app: BootHost) -> Config | None:
    from agent.github.errors import GitHubError
    from agent.github.launch import GitHubRequest, open_github

    options = app.options
    config = await load_config(app, None)
    if config is None:
        return None
    request = GitHubRequest(options.github, options.clone, options.issue, "", options.resume)
    app.show_progress("Opening " + options.github)
    try:
        opened = await open_github(request, config, app.show_event, app.github_progress)
    except GitHubError as exc:
        app.fatal(f"--github: {exc}", "Quit (Ctrl+Q), fix the repository or token, and start again.")
        return None
    finally:
        app.show_progress(None)
    app.bridge.attach_target(opened.workspace, registry=opened.registry)
    opened.attach(app.bridge.open_session(config, options.resume))
    if opened.prompt:
        app.call_later(app.send_prompt, opened.prompt)
    return config


async def _open_room(app: BootHost) -> Config | None:
    from agent.oct.errors import OctError
    from tui.roomlink import RoomLink

    options = app.options
    config = await load_config(app, None)
    if config is None:
        return None
    link = RoomLink(options, app.show_event, app.refresh_pane)
    app.bridge.link_room(link)
    app.refresh_pane()
    try:
        workspace = await link.join()
    except OctError as exc:
        app.fatal(f"could not join room {options.room}: {exc.message}",
                  "Quit (Ctrl+Q), check the room id and --server, and start again.")
        return None
    app.bridge.attach_target(workspace, meta={"room": options.room, "server": options.server})
    app.bridge.open_session(config, options.resume)
    return config
