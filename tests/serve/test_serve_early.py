"""`coder-tui serve` listens before its heavy imports (issue 22: ready within 0.5 s of launch).

No timing: aiohttp's import is held in the server process (a sitecustomize hook) and the banner's
first line and `GET /api/health` must come while it is; the requests that came meanwhile are
answered by the application once the import is let go.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from agent.frontends.serve.early import health_head
from tests.conftest import ROOT, TEST_KEY, cli_env, write_files
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import runtime_dir, start_host  # noqa: F401 - fixtures: the session host is the test's
from tests.serve.test_serve_ready import first_line

HOLD_AIOHTTP = '''
import importlib.machinery, os, sys, time

_GATE = os.environ["CODER_TUI_TEST_AIOHTTP_GATE"]


class _Held:
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        os.write(1, b"AIOHTTP-IMPORT-HELD\\n")
        deadline = time.monotonic() + 600
        while not os.path.exists(_GATE) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.loader.exec_module(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _Gate:
    def find_spec(self, name, path=None, target=None):
        if name != "aiohttp":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Held(spec.loader)
        return spec


sys.meta_path.insert(0, _Gate())
'''


def in_thread(request: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[httpx.Response]]:
    answers: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: answers.append(request()), daemon=True)
    thread.start()
    return thread, answers


def test_serve_listens_and_answers_health_before_importing_aiohttp(isolated_home: Path, fake_llm: FakeLLM,
                                                                  tmp_path: Path) -> None:
    hook, gate = tmp_path / "hook", tmp_path / "gate"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOLD_AIOHTTP)
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", str(root), "--port", "0", "--mode", "allow",
                             "--no-host", "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY],
                            env=cli_env(isolated_home, PYTHONPATH=f"{hook}:{ROOT}", CODER_TUI_TEST_AIOHTTP_GATE=str(gate)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        banner = first_line(proc)
        assert banner.startswith("listening on "), banner  # before: the hook's mark (aiohttp came first)
        url = banner.split()[-1]
        port = int(url.rsplit(":", 1)[1])
        health = httpx.get(url + "/api/health", timeout=60)  # answered while aiohttp's import is held
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert not gate.exists()
        # early requests that are not a plain health check wait for the application: not refused
        no_token, no_token_answer = in_thread(lambda: httpx.get(url + "/api/sessions", timeout=120))
        rebound, rebound_answer = in_thread(lambda: httpx.get(url + "/api/health", timeout=120,
                                                              headers={"Host": f"evil.example:{port}"}))
        gate.touch()
        no_token.join(120)
        rebound.join(120)
        assert no_token_answer[0].status_code == 401, no_token_answer[0].text
        assert rebound_answer[0].status_code == 403 and "DNS rebinding" in rebound_answer[0].json()["error"]
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        token = next(line for line in lines if line.startswith("token: ")).removeprefix("token: ").strip()
        fake_llm.script(Reply(text="hello once loaded"))
        answer = httpx.post(url + "/api/chat", json={"messages": [{"role": "user", "content": "hi"}], "stream": False},
                            headers={"Authorization": f"Bearer {token}"}, timeout=120)
        assert answer.status_code == 200 and answer.json()["content"] == "hello once loaded", answer.text
    finally:
        gate.touch()
        proc.send_signal(2)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


HEAD = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept: */*\r\n\r\n"


@pytest.mark.parametrize("data, taken", [
    (HEAD, True),
    (b"GET /api/health?x=1 HTTP/1.0\r\nHost: localhost:8000\r\n\r\n", True),
    (b"GET /api/health HTTP/1.1\r\n\r\n", False),  # no Host: the guard refuses it
    (HEAD[:-2], False),  # not whole yet: aiohttp reads the rest
    (HEAD + HEAD, False),  # pipelined: answered one by one by aiohttp
    (HEAD.replace(b"GET", b"POST"), False),
    (HEAD.replace(b"/api/health", b"/api/sessions"), False),
    (HEAD.replace(b"Accept", b"Content-Length: 3\r\nAccept"), False),
    (HEAD.replace(b"Accept", b"Transfer-Encoding: chunked\r\nAccept"), False),
    (HEAD.replace(b"127.0.0.1:8000", b"evil.example:8000"), False),  # the guard's 403 comes from aiohttp
    (HEAD.replace(b"Accept: */*", b"Origin: http://evil.example"), False),
])
def test_the_early_listener_answers_only_a_whole_plain_health_request(data: bytes, taken: bool) -> None:
    assert (health_head(data, 8000) is not None) is taken


MARK_CORE = '''
import importlib.abc, os, sys


class _Mark(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "agent.session.core":
            os.write(2, b"AGENT-CORE-IMPORTED\\n")
        return None


sys.meta_path.insert(0, _Mark())
'''


def test_a_serve_whose_turns_run_in_the_host_never_imports_the_agent_core(
        isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path, runtime_dir: Path, start_host) -> None:  # noqa: F811
    start_host()
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(MARK_CORE)
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", str(root), "--port", "0", "--mode", "allow",
                             "--token", "t0k", "--model", fake_llm.model, "--api-base", fake_llm.url,
                             "--api-key", TEST_KEY],
                            env=cli_env(isolated_home, XDG_RUNTIME_DIR=str(runtime_dir), PYTHONPATH=f"{hook}:{ROOT}"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        url = first_line(proc).split()[-1]
        fake_llm.script(Reply(text="hello from the host"))
        answer = httpx.post(url + "/api/chat", json={"messages": [{"role": "user", "content": "hi"}], "stream": False},
                            headers={"Authorization": "Bearer t0k"}, timeout=120)
        assert answer.status_code == 200 and answer.json()["content"] == "hello from the host", answer.text
    finally:
        proc.send_signal(2)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "AGENT-CORE-IMPORTED" not in err  # before: sessions.py imported it at start (~0.2 s before listening)
