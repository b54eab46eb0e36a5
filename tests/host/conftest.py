"""The session host as users run it: `coder-tui host` in its own process on a real Unix socket,
clients in the test (agent/host/client.py) or as `coder-tui run --attach` processes, the model the
scripted server (tests/fakellm.py)."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_KEY, cli, cli_env, write_files
from tests.fakellm import FakeLLM


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short $XDG_RUNTIME_DIR of the test's own (a Unix socket's path has at most 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="ht"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    stop_started_host(folder / "coder-tui" / "host.lock")
    shutil.rmtree(folder, ignore_errors=True)


def stop_started_host(lock: Path) -> None:
    """The hosts front ends started on demand in this test (each one's pid is in its lock), stopped:
    every `host*.lock` in the lock's folder (one per set of folders and keys, agent/hostplace.py)."""
    for each in sorted(lock.parent.glob("host*.lock")):
        _stop_holder(each)


def _stop_holder(lock: Path) -> None:
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return  # nobody holds it: no host runs
    except BlockingIOError:
        pid = int(os.pread(fd, 32, 0).decode().strip())
    finally:
        os.close(fd)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _ended(pid):
        time.sleep(0.05)


def _ended(pid: int) -> bool:
    """Whether the process has exited. A host started by a front end running in this test's own
    process (serve's thread, the app) is a child of it: once exited it stays a zombie, which
    `kill(pid, 0)` still finds, until it is reaped here."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass  # not our child: its parent reaps it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@dataclass
class HostProcess:
    process: subprocess.Popen[str]
    socket: Path
    env: dict[str, str]

    def options(self, llm: FakeLLM, ws: Path, mode: str = "ask") -> dict[str, Any]:
        return {"workspace": str(ws), "model": llm.model, "api_base": llm.url, "api_key": TEST_KEY, "mode": mode,
                "workflow": "direct"}


def wait_listening(process: subprocess.Popen[str], timeout: float = 60) -> str:
    """The host's first stderr line (it says where it listens) once it listens."""
    assert process.stderr is not None
    first = process.stderr.readline()
    assert "listening on" in first, first + (process.stderr.read() if process.poll() is not None else "")
    return first


def host_files(runtime: Path, suffix: str = ".sock") -> list[Path]:
    """The hosts' files of that kind in a runtime folder (`host-KEY.sock`, `.log`, `.lock`, `.json`)."""
    return sorted((runtime / "coder-tui").glob(f"host*{suffix}"))


def listening_on(first: str) -> Path:
    """The socket a host's first line names (`coder-tui host: listening on PATH (pid ...`)."""
    return Path(first.split("listening on ", 1)[1].split(" (pid", 1)[0])


@pytest.fixture
def start_host(isolated_home: Path, runtime_dir: Path) -> Iterator[Callable[..., HostProcess]]:
    started: list[HostProcess] = []

    def start(idle: float = 120, **extra_env: str) -> HostProcess:
        env = cli_env(isolated_home, XDG_RUNTIME_DIR=str(runtime_dir), **extra_env)
        process = subprocess.Popen(cli("host", "--idle", str(idle)), env=env, text=True,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        host = HostProcess(process, Path(), env)
        started.append(host)
        host.socket = listening_on(wait_listening(process))
        return host

    yield start
    for host in started:
        if host.process.poll() is None:
            host.process.terminate()
            try:
                host.process.wait(60)
            except subprocess.TimeoutExpired:
                host.process.kill()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", {"a.py": "def f():\n    return 1\n"})


async def next_of(source: Any, kind: str, /, timeout: float = 60, seen: list[dict[str, Any]] | None = None,
                  **match: Any) -> dict[str, Any]:
    """The client's next line of type `kind` (whose fields equal `match`); lines before it go to `seen`."""
    deadline = time.monotonic() + timeout
    while True:
        line = await asyncio.wait_for(source.lines.get(), max(0.1, deadline - time.monotonic()))
        assert line is not None, f"the connection ended before a {kind} line"
        if seen is not None:
            seen.append(line)
        if line.get("type") == kind and all(line.get(k) == v for k, v in match.items()):
            return line
