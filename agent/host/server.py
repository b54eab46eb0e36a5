"""The host process: a Unix socket server that owns live sessions (see agent/host/__init__.py).

    host = Host(opener, idle=600)
    await host.serve(socket_path())   # returns after `idle` seconds with no session and no client

One host per set of folders and keys (agent/hostplace.py): it holds `host-KEY.lock` beside its
socket (flock, released however it dies), so a second one started at the same moment leaves, and
writes `host-KEY.json` (what it serves) for `coder-tui sessions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from agent import paths
from agent.approval import Decision
from agent.secrets import redact
from agent.host.codewatch import CHECK_EVERY, installed_code
from agent.host.live import Client, LiveSession
from agent.subagents.live import spend_and_children
from agent.host.opening import OpenFailed, Opener, recorded_id
from agent.hostplace import lock_path, prepare_dir, remove_record, write_record
from agent.host.wire import (MAX_LINE, ApproveRequest, BadLine, DetachRequest, InputRequest, ListRequest,
                             OpenRequest, PromptRequest, Request, RunRequest, SetRequest, StopRequest, UndoRequest,
                             encode, parse_request, refusal, reply)

DEFAULT_IDLE = 600.0  # seconds without a live session or a client before the host exits


class HostRunning(Exception):
    """Another host holds the lock (its message names its pid)."""


class Host:
    def __init__(self, opener: Opener, idle: float = DEFAULT_IDLE, runs: Any = None) -> None:
        self.opener = opener  # opens a session for an `open` request (agent/frontends/host.py)
        self.runs = runs  # answers a one-shot `run` (agent/frontends/oneshot.py `dispatch`)
        self.idle = idle
        self.sessions: dict[str, LiveSession] = {}
        self.clients: set[Client] = set()
        self._closing: dict[str, asyncio.Task[None]] = {}
        self._names = itertools.count(1)
        self._quiet_since = time.monotonic()
        self._stop = asyncio.Event()
        self._lock_fd = -1
        self.code = installed_code()  # what was installed as it started (agent/host/codewatch.py)
        self.retired = False  # the installed code changed: no new clients, and gone once quiet
        self._server: asyncio.AbstractServer | None = None
        self._path: Path | None = None

    # -- lifetime -------------------------------------------------------------------------
    async def serve(self, path: Path, ready: Any = None) -> None:
        """Listen on `path` until quiet for `idle` seconds (or SIGTERM / SIGINT); `ready(path)` once listening."""
        prepare_dir(path.parent)
        self._lock(lock_path(path))
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket left by a host that was killed (we hold the lock: nobody listens on it)
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(self._connection, path=str(path), limit=MAX_LINE)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        write_record(path)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._stop.set)
        self._server, self._path = server, path
        if ready is not None:
            ready(path)
        try:
            await self._watch()
        finally:
            self._stop_listening()
            await self.shutdown()

    def _stop_listening(self) -> None:
        """No new client: the socket and the lock go (a host started now may take both over)."""
        if self._server is None or self._path is None:
            return
        self._server.close()
        remove_record(self._path)
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()
        self._server = None
        os.ftruncate(self._lock_fd, 0)
        os.close(self._lock_fd)
        self._lock_fd = -1

    def retire(self) -> None:
        """The installed code changed under this host: it takes no new client from now on (they
        start a host of the new code) and leaves once its sessions and clients are done."""
        if not self.retired:
            self.retired = True
            print(f"coder-tui host: the installed code changed; no new clients, leaving once "
                  f"{len(self.sessions)} session(s) and {len(self.clients)} client(s) are done", file=sys.stderr)
            self._stop_listening()

    def _lock(self, lock: Path) -> None:
        fd = paths.open_private(lock, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise HostRunning(f"a session host is already running (pid {holder})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    async def _watch(self) -> None:
        tick = max(0.05, min(1.0, self.idle / 4))
        looked = time.monotonic()
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), tick)
            if not self.retired and time.monotonic() - looked >= CHECK_EVERY:
                looked = time.monotonic()
                if await asyncio.to_thread(installed_code) != self.code:
                    self.retire()
            if self.sessions or self.clients or self._closing:
                self._quiet_since = time.monotonic()
            elif self.retired or time.monotonic() - self._quiet_since >= self.idle:
                return

    def stop(self) -> None:
        self._stop.set()

    async def shutdown(self) -> None:
        """Stop every run, close every session (their records end cleanly), tell the clients."""
        for client in list(self.clients):
            client.send(encode({"type": "host_closing"}))
        for live in list(self.sessions.values()):
            self._retire(live)
        if self._closing:
            await asyncio.wait(list(self._closing.values()), timeout=60)

    def _retire(self, live: LiveSession) -> None:
        session_id = live.session_id
        if self.sessions.get(session_id) is live:
            del self.sessions[session_id]
            task = asyncio.create_task(live.close())
            self._closing[session_id] = task
            task.add_done_callback(lambda _t: self._closing.pop(session_id, None))

    # -- connections ----------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = Client(f"client {next(self._names)}", on_overflow=lambda dropped: _drop(dropped, writer))
        self.clients.add(client)
        sending = asyncio.create_task(_send(client, writer))
        try:
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    client.send(refusal(0, f"a request line is longer than {MAX_LINE:,} bytes"))
                    break
                except ConnectionError:
                    break
                if not line:
                    break
                if line.strip():
                    client.send(await self._answer(client, line))
        finally:
            if getattr(client, "oneshot", None) is not None:
                client.oneshot.gone()  # type: ignore[attr-defined]  # a one-shot `run` stops with its client
            if client.live is not None:
                client.live.leave(client)  # its run goes on
            self.clients.discard(client)
            client.send(None)
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, TimeoutError):
                await asyncio.wait_for(sending, 10)

    async def _answer(self, client: Client, line: bytes) -> bytes:
        try:
            request = parse_request(line)
        except BadLine as exc:
            return refusal(exc.request_id, str(exc))
        try:
            return await self._dispatch(client, request)
        except (OpenFailed, ValueError) as exc:
            return refusal(request.id, str(exc))
        except Exception as exc:  # noqa: BLE001 - the client gets its answer; the host serves the others on
            print(f"coder-tui host: {request.type} failed: {type(exc).__name__}: {redact(str(exc))}",
                  file=sys.stderr, flush=True)
            return refusal(request.id, f"{request.type} failed in the session host: {type(exc).__name__}: "
                                       f"{redact(str(exc))}".splitlines()[0])

    async def _dispatch(self, client: Client, request: Request) -> bytes:
        if isinstance(request, (RunRequest, InputRequest)) or getattr(client, "oneshot", None) is not None:
            if self.runs is None:
                raise ValueError(f"{request.type}: this host does not run one-shot `run` requests")
            return await self.runs(self, client, request)
        if isinstance(request, ListRequest):
            return reply(request.id, sessions=self.listing())
        if isinstance(request, OpenRequest):
            return await self._open(client, request)
        live = client.live
        if live is None:
            raise ValueError(f"{request.type}: open a session first")
        if isinstance(request, PromptRequest):
            if not request.text.strip() and live.session is not None and live.session.unfinished_plan is None:
                raise ValueError("prompt: the text is empty")
            ticket, ahead = live.prompt(request.text, client.name, request.mentions)
            return reply(request.id, ticket=ticket, ahead=ahead)
        if isinstance(request, ApproveRequest):
            decision = Decision(request.decision, request.feedback, rejected_hunks=request.rejected_hunks,
                                edited=request.edited)
            answered = live.answer(request.approval_id, decision, client.name)
            return reply(request.id, approval_id=answered)
        if isinstance(request, StopRequest):
            stopped, dropped = live.stop(client.name)
            return reply(request.id, stopped=stopped, dropped=dropped)
        if isinstance(request, SetRequest):
            live.configure(client.name, request.mode, request.profile, request.model, request.reasoning, request.plan)
            return reply(request.id, mode=live.session.mode if live.session is not None else None)
        if isinstance(request, UndoRequest):
            return reply(request.id, restored=await live.undo(request.ref))
        assert isinstance(request, DetachRequest)
        live.leave(client)
        return reply(request.id, detached=True)

    async def _open(self, client: Client, request: OpenRequest) -> bytes:
        if client.live is not None:
            raise ValueError(f"this connection is attached to session {client.live.session_id} already")
        client.name = request.client or client.name
        live = self._find(request.session) or self._find(recorded_id(request))
        if live is None and request.live_only:
            raise ValueError(f"session {request.session!r} is not live in the session host")
        if live is None:
            for task in list(self._closing.values()):  # a session closing now is opened again once closed
                await asyncio.wait({task}, timeout=60)
            live = await self.opener(request, self._retire)
            self.sessions[live.session_id] = live
        elif request.options.get("mode") is not None:  # joining: `--mode` applies from now on
            if request.options["mode"] not in ("ask", "allow", "plan"):
                raise ValueError(f"open: bad option mode: {str(request.options['mode'])[:30]!r} (ask, allow or plan)")
            live.set_mode(request.options["mode"], client.name)
        session = live.session
        assert session is not None
        # the reply first (the client learns the id), then the session so far, then the live stream
        client.send(reply(request.id, session_id=live.session_id, workspace=session.workspace.label,
                          mode=session.mode, model=session.model))
        live.join(client)
        return b""  # everything was sent above

    def _find(self, ref: str | None) -> LiveSession | None:
        if ref is None:
            return None
        if ref in self.sessions:
            return self.sessions[ref]
        if ref in ("new", "last"):
            return None
        matches = [live for sid, live in self.sessions.items() if sid.startswith(ref)]
        return matches[0] if len(matches) == 1 else None

    def listing(self) -> list[dict[str, Any]]:
        rows = []
        for live in self.sessions.values():
            session = live.session
            assert session is not None
            rows.append({"session_id": live.session_id, "workspace": session.workspace.label,
                         "running": live.current is not None, "queued": len(live.queue),
                         "clients": [c.name for c in live.clients], "pending_approvals": list(live.pending),
                         "answered_approvals": list(live.resolved_by)[-64:], "prompt": live.title,
                         "mode": session.mode, **spend_and_children(session)})
        return rows


async def _send(client: Client, writer: asyncio.StreamWriter) -> None:
    try:
        while (line := await client.outbox.get()) is not None:
            client.taken(line)
            if line:
                writer.write(line)
                await writer.drain()
    except ConnectionError:
        pass  # the client died: its reader sees the end too
    finally:
        writer.close()


def _drop(client: Client, writer: asyncio.StreamWriter) -> None:
    """A client that left more than its outbox's limit unread: logged, its connection cut (its
    reader then ends, and it leaves its session like a client that died; the run goes on)."""
    unread = (f"more than {client.limit:,} bytes" if client.waiting > client.limit
              else f"{client.max_lines:,} lines")
    print(f"coder-tui host: dropped {client.name}: it left {unread} unread (it stopped reading)",
          file=sys.stderr, flush=True)
    writer.transport.abort()


