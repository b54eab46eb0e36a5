"""The fleet's test bed: a real `redis-server` (append-only file on) on a free loopback port, real
`coder-tui fleet worker` processes (each with its own home, as on its own machine), the scripted
model and the fake GitHub. Without redis-server the fleet tests are skipped, and say why.
"""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, TEST_KEY, cli_env
from tests.fakellm import FakeLLM, Reply, call
from tests.github.conftest import TOKEN
from tests.github.fake_server import FakeGitHub

NO_REDIS = ("redis-server is not installed, so the fleet tests cannot run: install it (Debian: apt-get install "
            "redis-server; .ci/run does)")
# Short limits, so that a killed worker's job is handed on within seconds: still a visibility
# timeout longer than a job may run, as in production.
WORKER_CONFIG = """[fleet]
job_timeout = 20
visibility_timeout = 24
approval_wait = 2
restore_interval = 1
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll `check` until it returns something true (a readiness probe, not a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout} s"
        time.sleep(0.05)


class RedisServer:
    """A redis-server of our own in a temp folder (appendonly yes), on a free loopback port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--protected-mode", "yes",
             "--logfile", str(self.folder / "redis.log")], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_until(self._pong, 20, "redis-server answering PING")
        return self

    def _pong(self) -> bool:
        try:
            return bool(self.client().ping())
        except Exception:  # noqa: BLE001 - not listening yet
            return False

    def client(self) -> Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, socket_timeout=10)

    def stop(self) -> None:
        """A clean shutdown (the append-only file is flushed)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(20)

    def dump(self) -> str:
        """Every key and value in the server (lists, hashes, sets, streams: all of them), as text."""
        client = self.client()
        out = []
        for key in client.scan_iter(count=1000):
            kind = client.type(key)
            value: Any = {"string": client.get, "hash": client.hgetall, "set": client.smembers,
                          "zset": lambda k: client.zrange(k, 0, -1, withscores=True),
                          "list": lambda k: client.lrange(k, 0, -1),
                          "stream": lambda k: client.xrange(k)}.get(kind, lambda k: "")(key)
            out.append(f"{key} {kind} {value!r}")
        return "\n".join(out)


@dataclass
class WorkerProc:
    name: str
    home: Path
    proc: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@dataclass
class Fleet:
    """Redis, the scripted model, the fake GitHub and the workers, shared by a module's tests."""

    redis: RedisServer
    llm: FakeLLM
    github: FakeGitHub
    folder: Path
    workers: list[WorkerProc] = field(default_factory=list)
    started: int = 0

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """A process of ours: its own folders, the broker, the scripted model, the fake GitHub."""
        return cli_env(home, CODER_TUI_FLEET_BROKER=self.redis.url, CODER_TUI_MODEL=self.llm.model,
                       CODER_TUI_API_BASE=self.llm.url, CODER_TUI_API_KEY=TEST_KEY, GITHUB_TOKEN=TOKEN,
                       CODER_TUI_GITHUB_API_URL=self.github.url, **extra)

    def client_env(self, home: Path) -> dict[str, str]:
        """The submitting user's: the broker and (for OWNER/*) GitHub; no model key, no model."""
        return cli_env(home, CODER_TUI_FLEET_BROKER=self.redis.url, GITHUB_TOKEN=TOKEN,
                       CODER_TUI_GITHUB_API_URL=self.github.url)

    def start_worker(self) -> WorkerProc:
        self.started += 1
        name = f"w{self.started}"
        home = self.folder / name
        config = home / "config" / "coder-tui"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text(WORKER_CONFIG)
        log = home / "worker.log"
        with log.open("w") as out:  # a cold process of its own: SIGKILL kills the worker itself
            proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "fleet", "worker", "--name", name],
                                    env=self.env(home), stdout=out, stderr=subprocess.STDOUT, text=True,
                                    stdin=subprocess.DEVNULL, cwd=str(ROOT))
        worker = WorkerProc(name, home, proc, log)
        self.workers.append(worker)
        return worker

    def alive(self) -> list[WorkerProc]:
        return [w for w in self.workers if w.proc.poll() is None]

    def ready(self, workers: list[WorkerProc]) -> None:
        for worker in workers:
            wait_until(lambda: f"fleet worker {worker.name} ready" in worker.output() or worker.proc.poll() is not None,
                       180, f"worker {worker.name} starting")
            assert worker.proc.poll() is None, worker.output()

    def keep(self, count: int) -> None:
        """`count` live workers, ready to take jobs."""
        new = [self.start_worker() for _ in range(count - len(self.alive()))]
        self.ready(new)

    def kill(self, name: str) -> None:
        worker = next(w for w in self.workers if w.name == name)
        worker.proc.send_signal(signal.SIGKILL)
        worker.proc.wait(10)

    def stop(self) -> None:
        for worker in self.alive():
            worker.proc.send_signal(signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.proc.wait(20)
            except subprocess.TimeoutExpired:
                worker.proc.kill()


def repo_of(body: dict[str, Any]) -> str:
    """The repository a model request works on (its system prompt names it), or its folder."""
    system = str(body["messages"][0].get("content") or "")
    found = re.search(r"workspace: ([\w.-]+/[\w.-]+)@", system) or re.search(r"workspace: (\S+)", system)
    return found.group(1) if found else ""


def turns(body: dict[str, Any]) -> int:
    return sum(m.get("role") == "assistant" for m in body["messages"])


def last_user(body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [])


def edit_then_done(body: dict[str, Any], usage: tuple[int, int] | None = None) -> Reply:
    """Each job's model: write README.md naming its repository, then say it is done."""
    if turns(body) == 0:
        name = repo_of(body).split("/")[-1]
        return Reply(tool_calls=[call("write_file", file_path="README.md", content=f"# {name}, bumped\n")],
                     usage=usage)
    return Reply(text="Done.", usage=usage)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    if shutil.which("redis-server") is None:
        pytest.skip(NO_REDIS)
    folder = tmp_path_factory.mktemp("fleet")
    redis = RedisServer(folder).start()
    llm = FakeLLM(responder=edit_then_done)
    github = FakeGitHub(folder / "fake-github")
    github.add_token(TOKEN, "alice")
    with llm, github:
        bed = Fleet(redis, llm, github, folder)
        try:
            yield bed
        finally:
            bed.stop()
            redis.stop()


@pytest.fixture
def three(fleet: Fleet) -> Fleet:
    """The fleet with three live workers (a test before may have killed one), the default model."""
    fleet.llm.responder = edit_then_done
    fleet.keep(3)
    return fleet


def repos_file(folder: Path, names: list[str]) -> Path:
    path = folder / "repos.txt"
    path.write_text("# the batch's repositories\n" + "\n".join(names) + "\n")
    return path
