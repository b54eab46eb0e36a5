"""`coder-tui run PROMPT` through a warm session host by default (issue 22), as users run it: real
`coder-tui` processes, the host's real socket, the scripted model. Which way a run went is read
from its session record (`frontend: host` in its header for a run done in the host)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tests.conftest import TEST_KEY, run_cli
from tests.host.conftest import host_files
from tests.fakellm import FakeLLM, Reply, call
from tests.host.test_host_fanout import EDIT, session_lines


def run_args(llm: FakeLLM, ws: Path, prompt: str, *extra: str) -> list[str]:
    return ["run", prompt, str(ws), "--model", llm.model, "--api-base", llm.url, *extra]


def through_host(home: Path, session_id: str) -> bool:
    return session_lines(home, session_id)[0]["data"].get("frontend") == "host"


def session_of(stderr: str) -> str:
    found = re.findall(r"session (\d{8}-\d{6}-[0-9a-f]+)", stderr)
    assert found, stderr
    return found[-1]


def auto(runtime_dir: Path, **env: str) -> dict[str, str]:
    """The environment of a `run` that may use the host (the suite's default is CODER_TUI_HOST=off)."""
    return {"XDG_RUNTIME_DIR": str(runtime_dir), "CODER_TUI_HOST": "auto", "OPENAI_API_KEY": TEST_KEY, **env}


def test_run_goes_through_the_running_host_and_prints_what_run_prints(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path, start_host) -> None:
    start_host(OPENAI_API_KEY=TEST_KEY)  # the run's own key: a host of other keys is not borrowed
    fake_llm.script(Reply(text="Hello there."), Reply(text="Hello there."), Reply(text="Hello there."))
    warm = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow"), **auto(runtime_dir))
    cold = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow", "--no-host"),
                   **auto(runtime_dir))
    assert warm.returncode == cold.returncode == 0, warm.stderr + cold.stderr
    assert through_host(isolated_home, session_of(warm.stderr))
    assert not through_host(isolated_home, session_of(cold.stderr))  # --no-host: in-process
    assert warm.stdout == cold.stdout == "Hello there.\n\n"
    assert warm.stderr.replace(session_of(warm.stderr), "ID") == cold.stderr.replace(session_of(cold.stderr), "ID")
    assert [h.get("authorization") or h.get("Authorization") for h in fake_llm.headers] == [f"Bearer {TEST_KEY}"] * 2
    other_key = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow"),
                        **auto(runtime_dir, OPENAI_API_KEY="sk-another-key-0000000000", CODER_TUI_HOST_IDLE="5"))
    assert other_key.returncode == 0, other_key.stderr
    assert not through_host(isolated_home, session_of(other_key.stderr))  # the host's keys are not this run's


def test_run_json_and_approvals_on_stdin_through_the_host(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path, start_host) -> None:
    start_host(OPENAI_API_KEY=TEST_KEY)
    fake_llm.script(EDIT, Reply(text="Done."))
    answered = run_cli(isolated_home, *run_args(fake_llm, ws, "make f return 2", "--json"), stdin="y\n",
                       **auto(runtime_dir))
    assert answered.returncode == 0, answered.stderr
    events = [json.loads(line) for line in answered.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_started" and {"approval_required", "approval_resolved", "file_changed"} <= set(kinds)
    assert kinds[-1] == "complete" and kinds.count("complete") == 1 and events[-1]["success"] is True
    assert not {"replay_end", "turn_started", "turn_done", "client_joined"} & set(kinds)  # no host lines
    assert through_host(isolated_home, events[0]["session_id"])
    assert (ws / "a.py").read_text().endswith("return 2\n")
    fake_llm.script(Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2,
                                           new_content="    return 3")]), Reply(text="Not done."))
    closed = run_cli(isolated_home, *run_args(fake_llm, ws, "make f return 3"), **auto(runtime_dir))
    assert closed.returncode == 3, closed.stderr  # stdin closed before the approval: denied, as `run` does
    assert "denied because stdin closed" in closed.stderr
    assert "✗ denied · 2 steps" in closed.stderr and "answered ·" not in closed.stderr  # the verdict, as `run` says it
    assert through_host(isolated_home, session_of(closed.stderr))
    assert (ws / "a.py").read_text().endswith("return 2\n")


def test_no_host_runs_in_process_and_starts_one_for_the_next_run_whose_log_has_no_key(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path) -> None:
    fake_llm.script(Reply(text="One."), Reply(text="Two."))
    first = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow"),
                    **auto(runtime_dir, CODER_TUI_HOST_IDLE="120"))
    assert first.returncode == 0 and first.stdout == "One.\n\n", first.stderr
    assert not through_host(isolated_home, session_of(first.stderr))
    wait_for(lambda: any(b"listening on" in _read(log) for log in host_files(runtime_dir, ".log")))  # started in the background
    second = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow"), **auto(runtime_dir))
    assert second.returncode == 0 and second.stdout == "Two.\n\n", second.stderr
    assert through_host(isolated_home, session_of(second.stderr))
    assert all(TEST_KEY.encode() not in _read(log) for log in host_files(runtime_dir, ".log"))
    assert TEST_KEY not in (isolated_home / "data" / "coder-tui" / "sessions" /
                            f"{session_of(second.stderr)}.jsonl").read_text()


def test_opting_out_or_what_the_host_cannot_do_stays_in_process(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path, start_host) -> None:
    start_host(OPENAI_API_KEY=TEST_KEY)
    fake_llm.script(*[Reply(text="Hi.") for _ in range(3)])
    config = isolated_home / "config" / "coder-tui"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text('host = "off"\n')
    off = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow"),
                  **auto(runtime_dir, CODER_TUI_HOST=""))  # unset: the config decides
    (config / "config.toml").write_text('host = "auto"\n')
    trusting = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow", "--trust"),
                       **auto(runtime_dir))  # --trust writes this shell's config: in-process
    other_env = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow"),
                        **auto(runtime_dir, EDITOR="an-editor-the-host-does-not-have"))
    for name, done in (("off", off), ("--trust", trusting), ("other environment", other_env)):
        assert done.returncode == 0 and done.stdout == "Hi.\n\n", done.stderr
        assert not through_host(isolated_home, session_of(done.stderr)), name


def test_host_off_never_starts_a_host(fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path) -> None:
    fake_llm.script(Reply(text="Hi."))
    done = run_cli(isolated_home, *run_args(fake_llm, ws, "say hi", "--mode", "allow"),
                   **auto(runtime_dir, CODER_TUI_HOST="off"))
    assert done.returncode == 0, done.stderr
    assert not host_files(runtime_dir, ".log")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def wait_for(condition, timeout: float = 120) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_ctrl_c_stops_a_run_done_in_the_host_as_it_stops_one_in_process(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path, start_host) -> None:
    import signal
    import subprocess
    import sys
    import threading

    from tests.conftest import cli_env

    start_host(OPENAI_API_KEY=TEST_KEY)
    held = threading.Event()
    fake_llm.script(Reply(text="too late", hold=held))
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", *run_args(fake_llm, ws, "say hi", "--mode", "allow")],
                            env=cli_env(isolated_home, **auto(runtime_dir)), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(fake_llm.requests) == 1)  # the turn waits on the model
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    finally:
        held.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "stopping… (press Ctrl+C again to quit at once)" in err and "✗ stopped" in err
    assert through_host(isolated_home, session_of(err))


def test_a_command_nobody_defined_is_refused_through_the_host_as_in_process(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path, start_host) -> None:
    start_host(OPENAI_API_KEY=TEST_KEY)
    warm = run_cli(isolated_home, *run_args(fake_llm, ws, "/nosuchcmd foo"), **auto(runtime_dir))
    cold = run_cli(isolated_home, *run_args(fake_llm, ws, "/nosuchcmd foo", "--no-host"), **auto(runtime_dir))
    assert warm.returncode == cold.returncode == 2
    assert warm.stderr == cold.stderr and "unknown command /nosuchcmd (no custom commands found" in warm.stderr
    assert warm.stdout == cold.stdout == "" and fake_llm.requests == []
