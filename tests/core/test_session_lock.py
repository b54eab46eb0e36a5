"""One writer per session: a second `run --resume` of a session in use is refused, naming the
holder; a lock left by a killed process is taken over (issue 19)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from agent.session.lock import SessionLock, SessionLocked, holder_of
from agent.session.record import SessionInUse, SessionStore
from tests.conftest import cli, cli_env, write_files
from tests.fakellm import FakeLLM, Reply

# The holder's pid is the process's own: a fork of the warm CLI would name another.
pytestmark = pytest.mark.cold_cli


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", {"a.py": "x = 1\n"})


def _resume(llm: FakeLLM, session_id: str, prompt: str) -> list[str]:
    return cli("run", prompt, "--resume", session_id, "--model", llm.model, "--api-base", llm.url,
               "--api-key", "sk-test-lock-0000", "--json", "--mode", "allow")


def _wait_for(condition: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _first_session(llm: FakeLLM, ws: Path, home: Path) -> str:
    llm.script(Reply(text="first answer"))
    args = cli("run", "first", "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
               "--api-key", "sk-test-lock-0000", "--json")
    done = subprocess.run(args, env=cli_env(home), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout.splitlines()[0])["session_id"])


def _held_run(llm: FakeLLM, session_id: str, home: Path, ws: Path, hold: threading.Event) -> subprocess.Popen[str]:
    """`run --resume` whose model reply is held until `hold` is set (it has the session open)."""
    llm.script(Reply(text="answer A", hold=hold))
    before = len(llm.requests)
    proc = subprocess.Popen(_resume(llm, session_id, "prompt A"), env=cli_env(home), cwd=ws, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for(lambda: len(llm.requests) > before or proc.poll() is not None, "the first run's request")
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    return proc


def test_second_resume_is_refused_naming_the_holder(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    session_id = _first_session(fake_llm, ws, isolated_home)
    hold = threading.Event()
    first = _held_run(fake_llm, session_id, isolated_home, ws, hold)
    try:
        second = subprocess.run(_resume(fake_llm, session_id, "prompt B"), env=cli_env(isolated_home), cwd=ws,
                                capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    finally:
        hold.set()
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.returncode == 2 and "Traceback" not in second.stderr
    message = second.stderr.strip()
    assert len(message.splitlines()) == 1
    assert f"session {session_id} is in use by pid {first.pid} (coder-tui run, since " in message
    path = isolated_home / "data" / "coder-tui" / "sessions" / f"{session_id}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    said = [(r["data"]["role"], r["data"].get("content")) for r in lines if r["kind"] == "message"]
    assert said == [("user", "first"), ("assistant", "first answer"), ("user", "prompt A"), ("assistant", "answer A")]
    assert "prompt B" not in path.read_text()
    assert not path.with_suffix(".lock").exists()  # released at the end of the run


def test_lock_left_by_a_killed_process_is_taken_over(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    session_id = _first_session(fake_llm, ws, isolated_home)
    hold = threading.Event()
    killed = _held_run(fake_llm, session_id, isolated_home, ws, hold)
    path = isolated_home / "data" / "coder-tui" / "sessions" / f"{session_id}.jsonl"
    assert json.loads(path.with_suffix(".lock").read_text())["pid"] == killed.pid
    killed.send_signal(signal.SIGKILL)
    killed.wait(60)
    hold.set()
    assert path.with_suffix(".lock").exists()  # left behind, naming a process that is gone
    fake_llm.script(Reply(text="answer C"))
    third = subprocess.run(_resume(fake_llm, session_id, "prompt C"), env=cli_env(isolated_home), cwd=ws,
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert third.returncode == 0, third.stderr
    warnings = [json.loads(line)["message"] for line in third.stdout.splitlines()
                if json.loads(line)["type"] == "warning"]
    assert any(f"left locked by pid {killed.pid}" in w and "took it over" in w for w in warnings), warnings
    assert "answer C" in path.read_text()


def test_in_process_openers_and_holder_of(isolated_home: Path) -> None:
    store = SessionStore()
    writer = store.create({"workspace": "/tmp/w"})
    writer.message({"role": "user", "content": "hello"})  # the file (and its lock) start here
    assert holder_of(writer.path) is not None and holder_of(writer.path).pid == os.getpid()  # type: ignore[union-attr]
    with pytest.raises(SessionInUse, match=f"session {writer.session_id} is in use by pid {os.getpid()}"):
        store.reopen(writer.path)
    writer.close()
    assert holder_of(writer.path) is None
    again, data = store.reopen(writer.path)
    assert data.messages[0]["content"] == "hello" and again.lock is not None and again.lock.took_over is None
    with pytest.raises(SessionLocked):
        SessionLock.acquire(writer.path)
    again.close()
