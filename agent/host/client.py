"""A front end's side of the host: connect (starting the host when none runs), send requests,
receive the session's lines.

    client = await HostClient.connect_or_start()
    opened = await client.request("open", session="new", client="run --attach", options={...})
    ... await client.lines.get()   # each event / host line as a dict; None: the connection ended

HostUnavailable says why there is no host to use (its folder unsafe, it would not start): front
ends then work in-process, as they did before the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agent.hostplace import HostPlaceError, check_dir, log_path, prepare_dir, socket_path
from agent.host.wire import MAX_LINE

START_WAIT = 30.0  # seconds a host started on demand may take to listen
IDLE_ENV = "CODER_TUI_HOST_IDLE"  # the quiet period of a host started on demand (seconds)


class HostUnavailable(Exception):
    """No host can be used (one line: why)."""


class HostRefused(Exception):
    """The host answered a request with an error (its message)."""


class HostClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.lines: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.started = False  # this client started the host
        self._reading = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, path: Path | None = None) -> HostClient:
        """The running host's client (OSError when none listens; HostPlaceError when its folder is unsafe)."""
        path = path or socket_path()
        check_dir(path.parent)
        reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE)
        return cls(reader, writer)

    @classmethod
    async def connect_or_start(cls, path: Path | None = None) -> HostClient:
        """The running host's client, or a new host's (started detached); HostUnavailable otherwise."""
        path = path or socket_path()
        try:
            prepare_dir(path.parent)
            return await cls.connect(path)
        except HostPlaceError as exc:
            raise HostUnavailable(str(exc)) from None
        except OSError:
            pass  # none listens: start one
        process = start_host(path)
        deadline = time.monotonic() + START_WAIT
        while time.monotonic() < deadline:
            try:
                client = await cls.connect(path)
            except OSError:
                if process.poll() is not None and process.returncode != 0:
                    raise HostUnavailable(f"the session host exited at start ({_log_tail(path)})") from None
                await asyncio.sleep(0.02)
                continue
            client.started = True
            return client
        raise HostUnavailable(f"the session host did not start listening within {START_WAIT:.0f} s")

    async def _read(self) -> None:
        try:
            while line := await self._reader.readline():
                data = json.loads(line)
                if data.get("type") == "reply" and data.get("id") in self._waiting:
                    future = self._waiting.pop(data["id"])
                    if not future.done():
                        future.set_result(data)
                else:
                    self.lines.put_nowait(data)
        except (ConnectionError, ValueError, asyncio.LimitOverrunError):
            pass
        finally:
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("the session host closed the connection"))
            self._waiting.clear()
            self.lines.put_nowait(None)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for its reply (HostRefused with the host's error; ConnectionError
        when the host is gone)."""
        if self._reading.done():
            raise ConnectionError("the session host closed the connection")
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._writer.write((json.dumps({"type": kind, "id": request_id, **fields}) + "\n").encode())
        await self._writer.drain()
        answer = await future
        if not answer.get("ok"):
            raise HostRefused(str(answer.get("error") or "refused"))
        return answer

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading


def start_host(path: Path) -> subprocess.Popen[bytes]:
    """`coder-tui host` detached from this terminal (its own session), its stderr in host-KEY.log."""
    command = [sys.executable, "-m", "tui.cli", "host", "--socket", str(path)]
    idle = os.environ.get(IDLE_ENV)
    if idle:
        command += ["--idle", idle]
    # the host runs this very code: the folder that holds this `agent` package leads its path
    source = str(Path(__file__).resolve().parent.parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p)}
    fd = os.open(log_path(path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fd, env=env,
                                   start_new_session=True, cwd=str(path.parent), close_fds=True)
    finally:
        os.close(fd)
    # Reaped when it exits: a long-lived serve, acp or app that started it kept a zombie otherwise.
    threading.Thread(target=process.wait, name="reap-host", daemon=True).start()
    return process


def _log_tail(path: Path) -> str:
    try:
        lines = (log_path(path)).read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "no log"


async def live_sessions(path: Path | None = None) -> list[dict[str, Any]] | None:
    """The running host's live sessions (None when no host runs; never starts one)."""
    try:
        client = await HostClient.connect(path)
    except (OSError, HostPlaceError):
        return None
    try:
        return list((await client.request("list"))["sessions"])
    except (HostRefused, ConnectionError):
        return None
    finally:
        await client.close()
