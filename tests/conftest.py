"""Shared fixtures: isolated user folders, the scripted model server, and a session harness."""

from __future__ import annotations

import os
import socket
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests import fasttier, marks, progress
from tests.progress import (pytest_collection_finish, pytest_runtest_logreport,  # noqa: F401 - hooks
                            pytest_runtest_logstart, pytest_xdist_node_collection_finished)
from tests.fakellm import FakeLLM, Reply
from tests.zygote import WarmCli

ROOT = Path(__file__).resolve().parent.parent
TEST_KEY = "sk-test-0123456789abcdefSECRET"
PROVIDER_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY",
                 "CODER_TUI_MODEL", "CODER_TUI_API_BASE", "CODER_TUI_API_KEY", "CODER_TUI_MODE",
                 "GITHUB_TOKEN", "GH_TOKEN")


LOOPBACK = {"127.0.0.1", "::1", "localhost"}

# CLI commands run as forks of a warm process (tests/zygote.py) unless a test is marked cold_cli.
_zygote = WarmCli(str(ROOT))
# The session hosts CLI tests start listen in this run's own runtime folder and are stopped when it
# ends; `run` goes through one only where a test asks (CODER_TUI_HOST=auto): the others run in-process.
_RUNTIME = Path(tempfile.mkdtemp(prefix="ctrt"))


def pytest_configure(config: pytest.Config) -> None:
    progress.remember(config)  # a progress line every half minute (tests/progress.py)
    fasttier.install(config)  # fails the run when an unmarked test is slow (tests/fasttier.py)
    config.addinivalue_line("markers", "slow: starts the CLI, Node, mypy or another Python, or runs over "
                                       "about 1 s; `pytest -m \"not slow\"` leaves them out (tests/marks.py)")
    config.addinivalue_line("markers", "cold_cli: CLI commands in this test start a real cold process, not a "
                                       "fork of the warm zygote (tests/zygote.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    marks.mark(items)


@pytest.fixture(scope="session", autouse=True)
def _warm_cli_session(request: pytest.FixtureRequest) -> Iterator[None]:
    # The environment as plugins left it, before any test changes it: what cli_env starts from.
    _zygote.env = {**{k: v for k, v in os.environ.items() if k not in PROVIDER_VARS},
                   "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    if os.environ.get("CODER_TUI_TEST_WARM") and any(item.nodeid in marks.WARM_CLI for item in request.session.items):
        _zygote.start()  # it imports while the first tests run
    yield
    _zygote.stop()
    from tests.host.conftest import stop_started_host

    stop_started_host(_RUNTIME / "coder-tui" / "host.lock")
    shutil.rmtree(_RUNTIME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _warm_cli(request: pytest.FixtureRequest) -> Iterator[None]:
    """cli() forks the zygote in this test, unless it is marked cold_cli (it needs a real process)."""
    _zygote.allowed = request.node.get_closest_marker("cold_cli") is None
    yield
    _zygote.allowed = False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test resolves a public host name: only loopback servers are reachable."""
    real = socket.getaddrinfo

    def resolve(host: object, *args: object, **kwargs: object) -> object:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in LOOPBACK:
            raise OSError(f"test tried to resolve {name}; only loopback is allowed")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config/data/cache folders and no provider keys."""
    home = tmp_path_factory.mktemp("home")
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache")):
        monkeypatch.setenv(var, str(home / sub))
    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(_RUNTIME))  # no test reaches the user's own session host
    monkeypatch.setenv("CODER_TUI_HOST", "off")
    # Language servers (basedpyright is a test dependency) start only in the tests about them
    # (tests/lsp): elsewhere an edit of a .py file would start one and report its diagnostics.
    monkeypatch.setenv("CODER_TUI_LSP", "off")
    return home


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for a `coder-tui` subprocess: isolated folders, the repo on the path."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    env.update(XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), PYTHONPATH=str(ROOT), NO_COLOR="1",
               XDG_RUNTIME_DIR=str(_RUNTIME), CODER_TUI_HOST="off")
    env.update(extra)
    return env


def cli(*args: str) -> list[str]:
    """The command line of `coder-tui ARGS`: a fork of the warm zygote when the test allows it."""
    warm = _zygote.socket()
    if warm is None:
        return [sys.executable, "-m", "tui.cli", *args]
    return [sys.executable, "-I", "-S", str(ROOT / "tests" / "zygote_client.py"), warm, *args]


def run_cli(home: Path, *args: str, stdin: str | None = None, timeout: float = 120,
            **env: str) -> subprocess.CompletedProcess[str]:
    """Run `coder-tui ARGS` to its end with isolated folders: stdin is the given text, else closed."""
    return subprocess.run(cli(*args), env=cli_env(home, **env), input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def write_files(root: Path, files: dict[str, str]) -> Path:
    """The folder root (made if missing) with these files (path relative to it: text) written in it."""
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@dataclass
class Harness:
    """An AgentSession on a temp folder, talking to the scripted model server."""

    llm: FakeLLM
    root: Path
    session: Any
    approver: Any
    events: list[Any] = field(default_factory=list)

    def script(self, *replies: Reply) -> None:
        self.llm.script(*replies)

    async def run(self, prompt: str = "do it") -> Any:
        return await self.session.run(prompt)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def read(self, name: str) -> str:
        return (self.root / name).read_text()

    def last_tool_message(self) -> str:
        return [m for m in self.session.messages if m["role"] == "tool"][-1]["content"]


def open_harness(llm: FakeLLM, root: Path, files: dict[str, str] | None, config: Any, approver: Any,
                 resume: str | None = None) -> Harness:
    """A Harness whose AgentSession runs with config on root, made with these files in it."""
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts
    from agent.session.target import Target
    from agent.workspaces.local import LocalWorkspace

    write_files(root, files or {})
    harness = Harness(llm, root, None, approver)
    harness.session = open_session(Target(LocalWorkspace(root)), config, SessionPorts(approver, harness.events.append),
                                   resume=resume)
    return harness


@pytest.fixture
async def make_harness(fake_llm: FakeLLM, tmp_path: Path) -> Any:
    from agent.approval import ScriptedApprover
    from agent.config import Config

    created: list[Harness] = []

    def make(mode: str = "allow", decisions: list[Any] | None = None, files: dict[str, str] | None = None,
             approver: Any = None, max_steps: int = 50, timeout: float = 10.0, resume: str | None = None,
             root: Path | None = None) -> Harness:
        config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY),
                        mode=mode, max_steps=max_steps, timeout=timeout, max_retries=2,
                        retry_base_delay=0.01)  # type: ignore[arg-type]
        harness = open_harness(fake_llm, root or tmp_path / "ws", files, config,
                               approver or ScriptedApprover(decisions or []), resume)
        created.append(harness)
        return harness

    yield make
    for harness in created:
        await harness.session.close()
