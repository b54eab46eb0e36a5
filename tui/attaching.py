"""The app as a client of the session host: `coder-tui attach [ID]` and `/attach [ID]`.

The session lives in the host (agent/host); the app holds its `HostedHandle` (agent/client) and
drives it through its one controller (tui/controller.py). Without an id a picker lists the host's live sessions (and who is attached)
and this folder's recorded ones. When no host can be used the app says so once and opens the
session in-process, as `coder-tui --resume ID` would.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from agent.textsafe import line as safe_line
from tui.widgets.statusbar import StatusBar
from tui.widgets.timeline import Timeline
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from agent.client.hosted import HostClient
    from tui.app import CoderApp
    from tui.controller import HandleController

CANCELLED = "Nothing attached (Esc)."


async def boot_attached(app: CoderApp) -> bool:
    """`coder-tui attach [ID]`: True when the app is attached (or gave up, and said why); False
    when no host can be used and boot opens the session in-process (`options.resume` set)."""
    from agent.client.hosted import HostClient, HostUnavailable

    ref = str(app.options.attach or "")
    try:
        client = await HostClient.connect_or_start()
    except HostUnavailable as exc:
        app.notice(f"The session host is not available ({safe_line(str(exc))}); opening the session in-process.",
                   "warning")
        chosen = ref or await _pick(app, None)
        if chosen is None:
            app.exit(0, message=CANCELLED)
            return True
        app.options.resume = None if chosen == "new" else chosen
        return False
    if client.started:
        app.notice("Started the session host (it stays for the next front end).", "dim")
    problem = await attach_with(app, client, ref)
    if problem is not None:
        await client.close()
        if problem:
            app.fatal(problem, "Quit (Ctrl+Q) and start again; `coder-tui sessions` lists the sessions.")
        else:
            app.exit(0, message=CANCELLED)
    return True


async def attach_command(app: CoderApp, arg: str) -> None:
    """/attach [ID]: the running app switches to a session in the host (a picker without ID)."""
    from agent.client.hosted import HostClient, HostUnavailable

    bridge = app.bridge
    if bridge.session is not None and bridge.session.running:
        app.notice("/attach waits until the agent is idle: press Esc to stop the run first.", "warning")
        return
    try:
        client = await HostClient.connect_or_start()
    except HostUnavailable as exc:
        app.notice(f"/attach: the session host is not available ({safe_line(str(exc))}); "
                   "/resume ID continues a recorded session here.", "error")
        return
    problem = await attach_with(app, client, arg)
    if problem is not None:
        await client.close()
        if problem:
            app.notice(f"{problem}. `coder-tui sessions` lists the sessions.", "error")


async def attach_with(app: CoderApp, client: HostClient, ref: str) -> str | None:
    """Open or join `ref` (the picker's choice when empty) on `client`: None once attached, else
    why not ("" when the picker was cancelled)."""
    from agent.client.hosted import HostedHandle, HostRefused
    from tui.controller import HandleController

    if not ref:
        chosen = await _pick(app, client)
        if chosen is None:
            return ""
        ref = chosen
    elif ref == "last":  # this folder's newest: a live one first (its record may not list it yet)
        ref = await _live_last(app, client) or ref
    try:
        handle = await HostedHandle.open(client, ref, f"coder-tui app (pid {os.getpid()})", open_options(app, ref))
    except (HostRefused, ConnectionError, TimeoutError) as exc:
        return f"attach: {safe_line(str(exc))}"
    driver = HandleController(handle, app, app.show_event, workspace=handle.workspace_label,
                              model=str(handle.model), others=list(handle.state.get("clients", [])))
    await app.bridge.drive(driver)
    _reset_view(app)
    busy = bool(handle.state.get("running") or handle.state.get("queued"))
    _show_replay(app, driver, driver.history(busy))
    driver.lost = lambda message: host_lost(app, driver, message)
    driver.follow()
    app.load_files()  # @ completion offers the session's files
    return None


def open_options(app: CoderApp, ref: str) -> dict[str, Any]:
    """What the host opens a session with (a live one ignores them): this app's command line."""
    options = app.options
    values = {"workspace": os.path.abspath(options.workspace), "model": options.model, "api_base": options.api_base,
              "api_key": options.api_key, "mode": options.mode, "profile": getattr(options, "profile", None),
              "workflow": getattr(options, "workflow", None), "sandbox": getattr(options, "sandbox", None)}
    if ref not in ("new", "last"):
        values.pop("workspace")  # a recorded session works where it worked
    return {k: v for k, v in values.items() if v is not None}


async def _live_last(app: CoderApp, client: HostClient) -> str | None:
    from agent.client.hosted import HostRefused

    try:
        live = list((await client.request("list"))["sessions"])
    except (HostRefused, ConnectionError):
        return None
    folder = _folder_label(app)
    mine = [str(row["session_id"]) for row in live if row.get("workspace") == folder]
    return mine[-1] if mine else None  # the host lists them in the order it opened them


async def _pick(app: CoderApp, client: HostClient | None) -> str | None:
    from agent.client.hosted import HostRefused
    from tui.screens.attachpicker import AttachPicker

    live: list[dict[str, Any]] = []
    if client is not None:
        try:
            live = list((await client.request("list"))["sessions"])
        except (HostRefused, ConnectionError):
            live = []
    picker = AttachPicker(live, _folder_label(app), host=client is not None)
    chosen: str | None = await app.push_screen_wait(picker)
    return chosen


def _folder_label(app: CoderApp) -> str:
    from agent.workspaces.base import WorkspaceError
    from agent.workspaces.local import LocalWorkspace

    try:
        return LocalWorkspace(str(app.options.workspace)).label
    except WorkspaceError:
        return str(app.options.workspace)


def _reset_view(app: CoderApp) -> None:
    app.query_one(Transcript).clear()
    app.query_one(Timeline).clear()
    status = app.query_one("#status", StatusBar)
    status.set_usage(0, 0, None)
    status.set_allowances([])


def _show_replay(app: CoderApp, remote: HandleController, items: list[object]) -> None:
    """The session so far: its recorded part as a resumed session shows it, then what the host ran
    since it opened it (prompts, events, the approval that waits), as it was shown live."""
    from agent.client.commands import Note

    status = app.query_one("#status", StatusBar)
    status.set_workspace(remote.workspace)
    status.set_model(remote.model)
    app.set_mode(remote.mode)
    first_host = next((i for i, item in enumerate(items) if isinstance(item, Note)), len(items))
    if first_host:
        _replay_record(app, remote.session_id, items[:first_host])
    for item in items[first_host:]:
        remote.show(item, live=False)
    timeline = app.query_one(Timeline)
    if not remote.running and timeline.run is not None:
        timeline.end_run("interrupted: the run ended before this app attached")
    status.set_state("running" if remote.running else "idle")
    others = ", ".join(safe_line(name) for name in remote.others) or "nobody else"
    app.notice(f"Attached to session {remote.session_id} in the session host (attached: {others}). Prompts run "
               "there; Esc stops its run; quitting leaves it going.", "dim")


def _replay_record(app: CoderApp, session_id: str, prefix: list[object]) -> None:
    """The part the host resumed from the session's record: shown from the record, as --resume does
    (the conversation from its messages), cut where the host's own turns begin."""
    from agent.events import RunStarted
    from agent.session.notes import is_note
    from agent.session.record import SessionError, SessionStore, load
    from tui.replay import replay

    try:
        data = load(SessionStore().resolve(session_id))
    except (SessionError, OSError):
        return
    runs = sum(1 for item in prefix if isinstance(item, RunStarted))

    def first_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        count = 0
        for index, message in enumerate(messages):
            if message.get("role") == "user" and not is_note(message):
                count += 1
                if count > runs:
                    return messages[:index]
        return messages

    data.events = data.events[:len(prefix)]
    data.messages, data.history = first_turns(data.messages), first_turns(data.history)
    assert app.presenter is not None
    replay(data, app.presenter, app.query_one(Transcript), app.options.mode)


def host_lost(app: CoderApp, remote: HandleController, message: str) -> None:
    """The host went away: one line, and the app opens the session in-process (as --resume would)."""
    if app.bridge.driver is not remote:
        return
    app.bridge.driver = None
    _reset_view(app)
    app.notice(f"{message}; continuing it here, in-process.", "error")
    app.options.attach = None
    app.options.resume = remote.session_id
    app.options.model = app.options.model or remote.model or None  # the session's, unless the command line said
    app.query_one("#status", StatusBar).set_state("loading")
    app.restart_boot()
