"""`coder-tui run --attach`, `coder-tui sessions` and the host's lifetime, as users run them:
real processes, the host's real socket, the scripted model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent.host.client import HostClient
from tests.conftest import ROOT, TEST_KEY, cli, cli_env, run_cli
from tests.fakellm import FakeLLM, Reply, call
from tests.host.conftest import host_files, next_of
from tests.host.test_host_fanout import EDIT, session_lines


def attach_args(llm: FakeLLM, ws: Path, ref: str, prompt: str, *extra: str) -> list[str]:
    return ["run", "--attach", ref, prompt, "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
            "--api-key", TEST_KEY, *extra]


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_run_attach_starts_the_host_and_a_second_run_continues_the_live_session(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Done."), Reply(text="Still here."))
    first = run_cli(isolated_home, *attach_args(fake_llm, ws, "new", "make f return 2", "--mode", "allow", "--json"),
                    XDG_RUNTIME_DIR=str(runtime_dir), CODER_TUI_HOST_IDLE="60")
    assert first.returncode == 0, first.stderr
    lines = events(first.stdout)
    kinds = [line["type"] for line in lines]
    assert {"run_started", "tool_call", "file_changed", "complete", "turn_done"} <= set(kinds), first.stderr
    assert (ws / "a.py").read_text().endswith("return 2\n")
    assert len(host_files(runtime_dir)) == 1  # the host stays for the next front end
    assert TEST_KEY not in first.stdout + first.stderr
    session_id = next(line["session_id"] for line in lines if line["type"] == "run_started")
    second = run_cli(isolated_home, *attach_args(fake_llm, ws, session_id[:15], "and now?", "--json"),
                     XDG_RUNTIME_DIR=str(runtime_dir))
    assert second.returncode == 0, second.stderr
    later = events(second.stdout)
    kinds = [line["type"] for line in later]
    # the session so far (from its record: the host closed it when its last client left), then the new turn
    assert later[0]["type"] == "run_started" and later[0]["prompt"] == "make f return 2"
    assert kinds.index("replay_end") < kinds.index("turn_started") < len(kinds) - kinds[::-1].index("run_started")
    assert sum(kind == "run_started" for kind in kinds) == 2
    assert any(m.get("content") == "make f return 2" for m in fake_llm.requests[-1]["messages"])
    recorded = session_lines(isolated_home, session_id)
    prompts = [m["data"]["content"] for m in recorded if m.get("kind") == "message" and m["data"]["role"] == "user"]
    assert prompts == ["make f return 2", "and now?"]


def test_run_attach_answers_approvals_on_stdin_like_run(fake_llm: FakeLLM, ws: Path, isolated_home: Path,
                                                        runtime_dir: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Done."))
    done = run_cli(isolated_home, *attach_args(fake_llm, ws, "new", "make f return 2"), stdin="y\n",
                   XDG_RUNTIME_DIR=str(runtime_dir), CODER_TUI_HOST_IDLE="60")
    assert done.returncode == 0, done.stderr
    assert "+    return 2" in done.stdout and "answered by run --attach" in done.stderr
    assert (ws / "a.py").read_text().endswith("return 2\n")
    # stdin closed before the approval came: this command's own turn is denied, exit code 3
    fake_llm.script(Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2,
                                           new_content="    return 3")]), Reply(text="Denied, then."))
    denied = run_cli(isolated_home, *attach_args(fake_llm, ws, "new", "make f return 3"),
                     XDG_RUNTIME_DIR=str(runtime_dir))
    assert denied.returncode == 3, denied.stderr
    assert "stdin closed" in denied.stdout + denied.stderr
    assert denied.stderr.index("stdin closed") < denied.stderr.index("✗ denied · 2 steps")  # the verdict, then a
    assert "answered ·" not in denied.stderr  # summary that agrees with it, as `run` ends
    assert (ws / "a.py").read_text().endswith("return 2\n")


async def test_sessions_shows_the_live_sessions_and_who_is_attached(fake_llm: FakeLLM, ws: Path, start_host,
                                                                    isolated_home: Path) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="done", hold=release))
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        await client.request("prompt", text="a long task")
        await next_of(client, "step_started")
        listed = run_cli(isolated_home, "sessions", XDG_RUNTIME_DIR=str(host.socket.parent.parent))
        release.set()
        await next_of(client, "turn_done")
    finally:
        release.set()
        await client.close()
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith(opened["session_id"]))
    assert "a long task" in row and "[live in the host: running; attached: watcher]" in row


async def test_a_host_killed_with_kill_9_loses_no_recorded_turn(fake_llm: FakeLLM, ws: Path, start_host,
                                                               isolated_home: Path) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="first answer"), Reply(text="cut off", hold=release), Reply(text="third answer"))
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        session_id = opened["session_id"]
        await client.request("prompt", text="one")
        await next_of(client, "turn_done")
        attached = subprocess.Popen(cli(*attach_args(fake_llm, ws, session_id, "two")), text=True,
                                    env=cli_env(isolated_home, XDG_RUNTIME_DIR=str(host.socket.parent.parent)),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        await next_of(client, "step_started", timeout=120)  # the second turn waits on the model
        os.kill(host.process.pid, signal.SIGKILL)
        host.process.wait(30)
        assert await next_of_end(client)
        out, err = attached.communicate(timeout=60)
    finally:
        release.set()
        await client.close()
    assert attached.returncode == 1
    lost = [line for line in err.splitlines() if "session host stopped" in line]
    assert len(lost) == 1 and session_id in lost[0] and "Traceback" not in err
    recorded = session_lines(isolated_home, session_id)
    messages = [(m["data"]["role"], m["data"]["content"]) for m in recorded if m.get("kind") == "message"]
    assert messages[:3] == [("user", "one"), ("assistant", "first answer"), ("user", "two")]
    # the lock died with the host: the session continues in-process
    resumed = run_cli(isolated_home, "run", "three", "--resume", session_id, "--model", fake_llm.model,
                      "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    assert resumed.returncode == 0, resumed.stderr
    sent = [m.get("content") for m in fake_llm.requests[-1]["messages"] if m["role"] in ("user", "assistant")]
    assert sent[:3] == ["one", "first answer", "two"] and sent[-1] == "three"


async def next_of_end(client: HostClient) -> bool:
    """True once the client's connection has ended (its lines end with None)."""
    while (line := await client.lines.get()) is not None:
        pass
    return True


def test_the_host_exits_after_its_quiet_period(start_host) -> None:
    host = start_host(idle=0.5)
    assert host.process.wait(60) == 0
    assert not host.socket.exists()


def test_a_host_folder_of_another_user_is_refused_and_run_works_in_process(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path) -> None:
    folder = runtime_dir / "coder-tui"
    folder.mkdir(mode=0o700)
    try:
        os.chown(folder, 12345, 12345)
    except PermissionError:
        pytest.skip("changing a folder's owner needs root here")
    fake_llm.script(Reply(text="in-process answer"))
    done = run_cli(isolated_home, *attach_args(fake_llm, ws, "new", "hello", "--mode", "allow"),
                   XDG_RUNTIME_DIR=str(runtime_dir))
    assert done.returncode == 0, done.stderr
    assert "in-process answer" in done.stdout
    said = [line for line in done.stderr.splitlines() if "not available" in line]
    assert len(said) == 1 and "another user" in said[0] and "in-process" in said[0]
    assert not host_files(runtime_dir)


async def test_attach_checks_an_id_against_the_live_sessions_too_and_names_no_flag(
        fake_llm: FakeLLM, ws: Path, start_host, isolated_home: Path) -> None:
    host = start_host()
    env = {"XDG_RUNTIME_DIR": str(host.socket.parent.parent)}
    client = await HostClient.connect(host.socket)
    try:  # a live session with no prompt yet: nothing recorded, and still one to attach to
        opened = await client.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        probe = "from tui.attach_cli import _missing; import sys; print(repr(_missing(sys.argv[1])))"
        checks = [subprocess.run([sys.executable, "-c", probe, ref], cwd=ROOT, capture_output=True, text=True,
                                 env=cli_env(isolated_home, **env), timeout=60)
                  for ref in (opened["session_id"], opened["session_id"][:13], "20991231-nosuch")]
        refused = run_cli(isolated_home, *attach_args(fake_llm, ws, "20991231-nosuch", "hi"), **env)
    finally:
        await client.close()
    assert [c.stdout.strip() for c in checks] == ["None", "None", repr(MISSING)], [c.stderr for c in checks]
    assert refused.returncode == 2 and refused.stderr == f"coder-tui: error: --attach: {MISSING}\n"


MISSING = "no session '20991231-nosuch' (see `coder-tui sessions`)"
