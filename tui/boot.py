"""What the app does after its first frame: load the agent core, the config, the workspace.

Runs as a worker so the layout is on screen (and typing works) while the core imports, the
config loads, a GitHub clone progresses or a room is joined. Prompts typed meanwhile are sent
once the session exists.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any


def _import_core() -> None:
    import agent.runner  # noqa: F401 - the agent core: events, tools, workspaces, sessions
    import agent.workspaces.local  # noqa: F401


def _prewarm_litellm() -> None:
    import gc

    from agent.llm import prewarm

    try:
        prewarm()
    except Exception:  # noqa: BLE001 - the first run imports it again and reports the problem
        return
    # The model library brings about a million long-lived objects; left in the collected
    # generations, every full collection walks them (~300 ms pauses while typing).
    gc.freeze()


def flags_of(options: Any) -> dict[str, Any]:
    return {"model": options.model, "api_base": options.api_base, "api_key": options.api_key,
            "mode": options.mode, "profile": getattr(options, "profile", None)}


async def load_config(app: Any, root: Any) -> Any:
    """The merged config, after the setup screen when no usable model is configured (None: give up)."""
    from agent.config import ConfigError
    from agent.config import load_config as load

    flags = flags_of(app.options)
    try:
        config = await asyncio.to_thread(load, root, flags)
    except ConfigError as exc:
        app.fatal(f"configuration error: {exc}")
        return None
    from tui.screens.setup import SetupScreen, needs_setup

    why = needs_setup(config, os.environ)
    if why is None:
        return config
    result = await app.push_screen_wait(SetupScreen(config, os.environ, why))
    if result is None:
        app.fatal(f"no model is set up ({why}); type /setup to set one up")
        return None
    return await _reload(app, root, result)


async def _reload(app: Any, root: Any, result: Any) -> Any:
    """The config after the setup screen saved a choice (a key not saved is used for this run)."""
    from agent.config import load_config as load

    flags = {**flags_of(app.options), "model": result.model, "api_base": result.api_base}
    if result.api_key is not None and not result.key_saved:
        flags["api_key"] = result.api_key.get_secret_value()
    return await asyncio.to_thread(load, root, flags)


async def apply_setup(app: Any) -> None:
    """/setup: choose again; the session (or, when none could start, the boot) takes it up."""
    from tui.screens.setup import SetupScreen

    workspace = app.bridge.workspace
    result = await app.push_screen_wait(SetupScreen(app.config, os.environ, "choose the model, server and key"))
    if result is None:
        return
    app.config = await _reload(app, workspace.root if workspace is not None else None, result)
    if app.bridge.session is None:
        app.restart_boot()
        return
    app.bridge.session.reconfigure(app.config)
    app.query_one("#status").set_model(app.config.model or "")
    app.query_one("#transcript").notice(f"model: {app.config.model}", "success")


async def boot(app: Any) -> None:
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
        app.fatal(f"--resume: {exc}")
        return
    except ProfileError as exc:
        app.fatal(f"profile: {exc}")
        return
    if config is None:
        return
    app.config = config
    app.apply_keymap(config.keymap)
    session = app.bridge.session
    app.session_opened(session)
    if app.bridge.room is not None:
        app.bridge.room.start(session, app)


async def _open_local(app: Any) -> Any:
    from agent.workspaces.base import WorkspaceError
    from agent.workspaces.local import LocalWorkspace

    try:
        workspace = LocalWorkspace(app.options.workspace)
    except WorkspaceError as exc:
        app.fatal(f"cannot open {app.options.workspace}: {exc}")
        return None
    app.bridge.workspace = workspace
    config = await load_config(app, workspace.root)
    if config is not None:
        app.bridge.open_session(config, app.options.resume)
    return config


async def _open_github(app: Any) -> Any:
    from agent.github.errors import GitHubError
    from agent.github.launch import GitHubRequest, open_github

    options = app.options
    config = await load_config(app, None)
    if config is None:
        return None
    request = GitHubRequest(options.github, options.clone, options.issue, "", options.resume)
    app.show_progress("Opening " + options.github)
    try:
        opened = await open_github(request, config, app.github_notice, app.github_progress)
    except GitHubError as exc:
        app.fatal(f"--github: {exc}")
        return None
    finally:
        app.show_progress(None)
    bridge = app.bridge
    bridge.workspace, bridge.registry_factory, app.github = opened.workspace, opened.registry, opened
    opened.attach(bridge.open_session(config, options.resume))
    if opened.prompt:
        app.call_later(app.send_prompt, opened.prompt)
    return config


async def _open_room(app: Any) -> Any:
    from agent.oct.errors import OctError
    from tui.roomlink import RoomLink

    options = app.options
    config = await load_config(app, None)
    if config is None:
        return None
    link = RoomLink(options, app.presenter.handle, app.refresh_pane)
    app.bridge.room = link
    app.refresh_pane()
    try:
        app.bridge.workspace = await link.join()
    except OctError as exc:
        app.fatal(f"could not join room {options.room}: {exc.message}")
        return None
    app.bridge.meta = {"room": options.room, "server": options.server}
    app.bridge.open_session(config, options.resume)
    return config
