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
import sys
from typing import Any

from agent import events as ev
from agent.events import ErrorEvent
from agent.frontends.common import UsageError, build_config, handle_ctrl_c, run_command
from agent.frontends.printing import JsonPrinter, TextPrinter
from agent.frontends.stdin import StdinApprover
from agent.llm.preload import warm_for
from agent.session.ports import SessionOptions, SessionPorts
from agent.session.target import Target, TargetError, TargetSpec, open_target


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


async def run_room(options: SessionOptions) -> int:
    config = build_config(options, None)
    # A model on the litellm path: it loads in a daemon thread while we join, so that a failed join exits at once.
    warm_for(config.model, config.api_base, config.model_path)
    printer = JsonPrinter(sys.stdout) if options.json else RoomPrinter(sys.stdout, sys.stderr)
    try:
        target = await open_target(TargetSpec.from_options(options), config, emit=printer.handle)
    except TargetError as exc:
        if options.json:  # stdout carries events only: the reason is an event too
            printer.handle(ErrorEvent(message=exc.message, recoverable=False))
        else:
            print(f"coder-tui: {exc.reason}", file=sys.stderr)
        return 1
    try:
        return await _serve(options, config, target, printer)  # no await before the watcher exists
    finally:
        await target.close()


async def _serve(options: SessionOptions, config: Any, target: Target, printer: Any) -> int:
    from agent.session.core import AgentSession
    from agent.session.open import open_session
    from agent.session.record import SessionError

    session: AgentSession  # opened below; the approver emits only once a run asks it something
    approver = StdinApprover(emit=lambda event: session.emit(event), shorthand=True)

    def sink(event: Any) -> None:
        approver.note_request(event)
        printer.handle(event)

    try:
        session = open_session(target, config, SessionPorts(approver, sink), resume=options.resume)
    except SessionError as exc:
        raise UsageError(f"--resume: {exc}") from None
    client, agent = target.room, target.agent
    assert client is not None and agent is not None  # a room target, bound to the session
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

    handle_ctrl_c(loop, on_interrupt)


def main(args: Any) -> int:
    """`coder-tui room` with its parsed arguments."""
    return run_command(run_room, SessionOptions.from_args(args))
