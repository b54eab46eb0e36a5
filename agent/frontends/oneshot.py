"""`coder-tui run PROMPT` through the session host (issue 22): the host opens a new session, runs
the prompt and prints it for the client exactly as `run` prints it in-process: the same printers
(agent/frontends/printing.py), the same stdin approver (its lines come over the socket), the same
summary and exit code (agent/frontends/headless.py). The client (agent/frontends/hostrun.py) only
forwards stdin and writes what it is sent:

    client → host   {"type": "run", "options": {...}, "env": {...}, "color": false}
                    {"type": "input", "text": "y"}   ... {"type": "input", "text": null}  (stdin closed)
                    {"type": "stop"}                                                     (Ctrl+C)
    host → client   {"type": "reply", "ok": true, "session_id": "..."}
                    {"type": "out", "fd": 1, "text": "..."}  (fd 2: stderr)  ...  {"type": "exit", "code": 0}

A run the host cannot do as `run` would is refused with `"in_process": true` and the reason: its
environment differs from the client's where a session depends on it (shell commands' variables,
the user folders), or the session cannot be opened (the client's in-process run says why, its way).
The client's environment is used for this session only (its config, keys, *_BASE_URL) and never
written anywhere.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from agent import events as ev
from agent.host.live import Client, LiveSession
from agent.host.opening import OpenFailed
from agent.host.wire import HOST_TYPES, InputRequest, OpenRequest, Request, RunRequest, StopRequest, encode, reply

if TYPE_CHECKING:
    from agent.host.server import Host

FOLDERS = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR")
CLOSED = "stdin is closed, so nobody can answer approvals; answer on stdin or use --mode allow"
STOPPING = "stopping… (press Ctrl+C again to quit at once)"


def env_difference(env: dict[str, str]) -> list[str]:
    """The variables a session depends on whose values differ between the host and `env`: what
    shell commands get (agent/tools/sandbox.py; PYTHONPATH aside: a host started on demand leads
    it with its own source) and where the user's config, sessions and caches live."""
    from agent.tools.sandbox import command_env

    mine, theirs = command_env(None, False), command_env(None, False, base=env)
    names = {k for k in {*mine, *theirs} if mine.get(k) != theirs.get(k)} - {"PYTHONPATH"}
    names |= {k for k in FOLDERS if os.environ.get(k) != env.get(k)}
    return sorted(names)


def in_process(request_id: int, why: str) -> bytes:
    return encode({"type": "reply", "id": request_id, "ok": False, "in_process": True, "error": why})


async def dispatch(host: Host, conn: Client, request: Request) -> bytes:
    """A request of a connection that runs (or starts) a one-shot `run`."""
    shot: OneShot | None = getattr(conn, "oneshot", None)
    if isinstance(request, RunRequest) and shot is None and conn.live is None:
        return await _start(host, conn, request)
    if shot is None:
        raise ValueError(f"{request.type}: send a run request first")
    if isinstance(request, InputRequest):
        shot.input(request.text)
        return reply(request.id)
    if isinstance(request, StopRequest):
        shot.interrupt()
        return reply(request.id)
    raise ValueError(f"{request.type}: this connection runs a one-shot `run`")


async def _start(host: Host, conn: Client, request: RunRequest) -> bytes:
    from agent.frontends.stdin import StdinApprover

    differ = env_difference(request.env)
    if differ:
        return in_process(request.id, f"the session host runs with other values of {', '.join(differ[:6])}")
    options = {k: v for k, v in request.options.items() if k != "resume"}
    opening = OpenRequest(type="open", session="new", client=request.client, options=options, env=request.env)
    shot = OneShot(conn, request)
    try:
        live = await host.opener(opening, host._retire, approver=shot.approver)  # type: ignore[call-arg]
    except OpenFailed as exc:
        return in_process(request.id, str(exc))
    assert isinstance(shot.approver, StdinApprover)
    host.sessions[live.session_id] = live
    shot.live = live
    conn.oneshot = shot  # type: ignore[attr-defined]
    conn.send(reply(request.id, session_id=live.session_id))
    live.join(shot)  # type: ignore[arg-type]
    prompt = str(request.options.get("prompt") or "")
    assert live.session is not None
    if (problem := live.session.agent.input.commands.unknown(prompt)) is not None:  # as headless refuses it
        shot.refuse(problem)
        return b""
    shot.ticket, _ = live.prompt(prompt, shot.name)
    return b""


class _Stream:
    """What a printer writes, sent to the client as `out` lines (its stdout or stderr)."""

    def __init__(self, conn: Client, fd: int, tty: bool) -> None:
        self.conn, self.fd, self.tty = conn, fd, tty

    def write(self, text: str) -> int:
        if text:
            self.conn.send(encode({"type": "out", "fd": self.fd, "text": text}))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


class OneShot:
    """The run's viewer in its live session: every event printed for the client, its approvals
    answered from the client's stdin lines, its exit code sent when its turn is done."""

    def __init__(self, conn: Client, request: RunRequest) -> None:
        from agent.frontends.stdin import StdinApprover
        from agent.session.ports import SessionOptions

        self.conn, self.name = conn, request.client
        self.live: LiveSession | None = None
        self.ticket = 0
        self.mine = False
        self.complete: ev.Complete | None = None
        self.misconfigured = False
        out, err = _Stream(conn, 1, request.color), _Stream(conn, 2, False)
        options = SessionOptions.model_validate(request.options)
        self.printer = _printer(options, out, err)
        self.approver = StdinApprover(emit=self._emit, shorthand=True)

    def _emit(self, event: Any) -> None:
        if self.live is not None and self.live.session is not None:
            self.live.session.emit(event)

    # -- what the live session sends its clients --------------------------------------------
    def send(self, line: bytes) -> None:
        import json

        data = json.loads(line)
        kind = data.get("type")
        if kind == "turn_started":
            self.mine = data["ticket"] == self.ticket
        elif kind == "turn_done" and data["ticket"] == self.ticket:
            self._finish(data)
        if kind in HOST_TYPES:
            return
        event = ev.parse_event(data)
        self.approver.note_request(event)
        if isinstance(event, ev.ErrorEvent) and event.configuration:
            self.misconfigured = True
        if isinstance(event, ev.Complete) and self.mine:
            self.complete = event
        self.printer.handle(event)

    def _finish(self, done: dict[str, Any]) -> None:
        from agent.frontends.stdin import verdict

        live = self.live
        assert live is not None and live.session is not None
        if self.complete is None:  # the turn raised: `run` would have stopped with its error
            self.conn.send(encode({"type": "out", "fd": 2, "text": f"coder-tui: error: {done.get('error')}\n"}))
            code = 1
        else:
            code, complete = 2, self.complete
            if not self.misconfigured:
                code, complete = verdict(complete, self.approver, True, self.printer)
            self.printer.summary(complete, live.session.totals, live.session.session_id)
        self.conn.send(encode({"type": "exit", "code": code}))
        asyncio.get_running_loop().call_soon(self.leave)

    def refuse(self, problem: str) -> None:
        """A usage error before the turn: one line and exit 2, as `run` in-process says it."""
        from agent.textsafe import visible

        self.conn.send(encode({"type": "out", "fd": 2, "text": f"coder-tui: error: {visible(problem)}\n"}))
        self.conn.send(encode({"type": "exit", "code": 2}))
        asyncio.get_running_loop().call_soon(self.leave)

    def leave(self) -> None:
        if self.live is not None:
            self.live.leave(self)  # type: ignore[arg-type]  # nobody left: the host closes the session

    # -- what the client sends ---------------------------------------------------------------
    def input(self, text: str | None) -> None:
        if text is None:
            self.approver.close(CLOSED)
        else:
            self.approver.handle_line(text)

    def interrupt(self) -> None:
        """Ctrl+C in the client: the first stops the run, as `run` does; with nothing to stop, exit 130."""
        if self.live is not None and self.live.stop():
            self.printer.notice(STOPPING)
            return
        self.conn.send(encode({"type": "exit", "code": 130}))

    def gone(self) -> None:
        """The client went away (killed, its terminal closed): its run stops, as an in-process one would."""
        self.approver.close(CLOSED)
        if self.live is not None and self.live.current is not None:
            self.live.stop()
        self.leave()


def _printer(options: Any, out: _Stream, err: _Stream) -> Any:
    """The printer `run` would use (agent/frontends/headless.py), writing to the client."""
    from agent.frontends.printing import RunJsonPrinter, TextPrinter

    if options.json_format == "seed":
        from agent.frontends.seedevents import SeedPrinter

        return SeedPrinter(out)  # type: ignore[arg-type]
    return RunJsonPrinter(out) if options.json else TextPrinter(out, err)  # type: ignore[arg-type]
