"""`coder-tui room ROOM_ID`: the agent in a live OCT room, without the UI.

Readable log lines, or with --json one event per line (the core's events plus `room_state`,
`peer_joined`, `peer_left`, `trigger`, `room_closed`). Runs until the room closes or Ctrl+C, then
leaves cleanly. Exit codes: 0 the room closed or we left, 1 joining failed or the connection was
lost, 2 usage or configuration errors. In ask mode, approvals are answered on stdin as for
`coder-tui run`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import webbrowser
from typing import Any

from agent import events as ev
from agent.events import ErrorEvent, PeerJoined, PeerLeft, RoomClosed, RoomState
from agent.headless import StdinApprover, UsageError, build_config
from agent.oct.client import RoomClient, RoomOptions
from agent.oct.crypto import start_key_pair
from agent.oct.errors import OctError
from agent.oct.login import LoginPrompt
from agent.printer import JsonPrinter, TextPrinter


class RoomPrinter(TextPrinter):
    """TextPrinter plus readable lines for room events."""

    def on_room_state(self, event: ev.RoomState) -> None:
        text = f"room · {event.phase.replace('_', ' ')}" + (f" · {event.message}" if event.message else "")
        self._line(self._paint(text, "dim"), self.err)
        if event.login_url and event.phase == "logging_in":
            self._line(self._paint(f"open this address to log in: {event.login_url}", "bold", "yellow"), self.err)

    def on_peer_joined(self, event: ev.PeerJoined) -> None:
        email = f" ({event.email})" if event.email else ""
        self._line(self._paint(f"room · {event.name} joined{email}", "dim"), self.err)

    def on_peer_left(self, event: ev.PeerLeft) -> None:
        self._line(self._paint(f"room · {event.name} left", "dim"), self.err)

    def on_trigger(self, event: ev.TriggerEvent) -> None:
        where = f"{event.path}:{event.line}" if event.path else "chat"
        queued = f" ({event.queued} waiting)" if event.queued else ""
        self._line(self._paint(f"▶ {event.by or 'someone'} @ {where}: {event.prompt}{queued}", "bold", "cyan"))

    def on_room_closed(self, event: ev.RoomClosed) -> None:
        self._line(self._paint(f"room · closed: {event.reason}", "yellow"), self.err)


def room_events(client: RoomClient, emit: Any) -> None:
    """Turn the client's notifications into room events for a printer or a UI."""
    status = client.status

    def state() -> RoomState:
        return RoomState(phase=status.phase, message=status.message, room_id=status.room_id,
                         server=status.server, peer_id=status.peer_id,
                         host=status.host.name if status.host else None, followed=status.followed,
                         readonly=status.readonly, login_url=status.login_url)

    def listener(what: str, detail: Any) -> None:
        if what == "followed":
            emit(state().model_copy(update={"message": f"following {detail}"}))
        elif what in ("state", "permissions", "login_url") and status.phase != "closed":
            emit(state())
        elif what == "state" and status.phase == "closed":
            emit(RoomClosed(reason=status.close_reason or "closed"))
        elif what == "peer_joined":
            emit(PeerJoined(peer_id=detail.id, name=detail.name, email=detail.email, colour=detail.colour))
        elif what == "peer_left":
            emit(PeerLeft(peer_id=detail.id, name=detail.name))

    client.listeners.append(listener)


def _load_model_library() -> None:
    from agent.llm import prewarm

    try:
        prewarm()
    except Exception:  # the first run imports it again and reports the problem properly
        pass


def _open_browser(prompt: LoginPrompt) -> None:
    """Try to open the login page; the address is printed either way."""
    threading.Thread(target=webbrowser.open, args=(prompt.url,), name="open-login", daemon=True).start()


async def run_room(options: Any) -> int:
    config = build_config(options, None)
    keys = start_key_pair()  # now: the 4096-bit key is generated while we log in and wait
    # Likewise the model library, in a daemon thread so that a failed join exits at once.
    threading.Thread(target=_load_model_library, name="load-litellm", daemon=True).start()
    printer = JsonPrinter(sys.stdout) if options.json else RoomPrinter(sys.stdout, sys.stderr)
    client = RoomClient(RoomOptions(room_id=options.room_id, server=options.server, name=options.name,
                                    email=options.email, on_web_login=_open_browser), keys)
    room_events(client, printer.handle)
    try:
        await client.join()
    except OctError as exc:
        await client.leave()
        if options.json:  # stdout carries events only: the reason is an event too
            printer.handle(ErrorEvent(message=f"could not join room {options.room_id}: {exc.message}",
                                      recoverable=False))
        else:
            print(f"coder-tui: {exc.message}", file=sys.stderr)
        return 1
    try:
        return await _serve(options, config, client, printer)  # no await before the watcher exists
    finally:
        await client.leave()


async def _serve(options: Any, config: Any, client: RoomClient, printer: Any) -> int:
    from agent.oct.roomagent import RoomAgent
    from agent.runner import AgentSession
    from agent.session import SessionError
    from agent.workspaces.room import RoomWorkspace

    workspace = RoomWorkspace(client)
    session: AgentSession  # opened below; the approver emits only once a run asks it something
    approver = StdinApprover(emit=lambda event: session.emit(event), shorthand=not options.json)

    def sink(event: Any) -> None:
        approver.note_request(event)
        printer.handle(event)

    try:
        session = AgentSession.open(config, workspace, approver, sink, resume=options.resume,
                                    meta={"room": options.room_id, "server": options.server})
    except SessionError as exc:
        raise UsageError(f"--resume: {exc}") from None
    agent = RoomAgent(client, workspace, session, session.emit, options.name)
    loop = asyncio.get_running_loop()
    approver.start(loop)
    interrupted = asyncio.Event()
    _install_interrupt(loop, interrupted, printer)
    worker = asyncio.create_task(agent.run())
    waiters = [asyncio.create_task(client.closed.wait()), asyncio.create_task(interrupted.wait())]
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    session.stop()
    for task in (worker, *waiters):
        task.cancel()
    await asyncio.gather(worker, *waiters, return_exceptions=True)
    await session.close()
    return 1 if client.lost else 0


def _install_interrupt(loop: asyncio.AbstractEventLoop, interrupted: asyncio.Event, printer: Any) -> None:
    def on_interrupt() -> None:
        if interrupted.is_set():
            os._exit(130)
        printer.notice("leaving the room… (press Ctrl+C again to quit at once)")
        interrupted.set()

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        pass


def main(options: Any) -> int:
    try:
        return asyncio.run(run_room(options))
    except UsageError as exc:
        print(f"coder-tui: error: {exc}", file=sys.stderr)
        return 2
