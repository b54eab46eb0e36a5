"""Where the host listens, and what it refuses: a folder of another user, a link, a second host."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from agent.hostplace import HostPlaceError, host_dir, prepare_dir, socket_path
from agent.session.lock import SessionLock
from tests.conftest import TEST_KEY, run_cli
from tests.fakellm import FakeLLM, Reply


def test_the_socket_is_in_the_runtime_folder_else_a_private_temp_folder(runtime_dir: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert socket_path().parent == runtime_dir / "coder-tui"
    assert re.fullmatch(r"host-[0-9a-f]{12}\.sock", socket_path().name)
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert host_dir().name == f"coder-tui-{os.getuid()}"


def test_a_folder_open_to_others_is_made_private_and_one_of_another_user_or_a_link_is_refused(
        runtime_dir: Path) -> None:
    folder = runtime_dir / "coder-tui"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    prepare_dir(folder)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    link = runtime_dir / "elsewhere"
    link.symlink_to(folder)
    with pytest.raises(HostPlaceError, match="not a folder"):
        prepare_dir(link)
    try:
        os.chown(folder, 12345, 12345)
    except PermissionError:
        pytest.skip("changing a folder's owner needs root here")
    with pytest.raises(HostPlaceError, match="belongs to another user"):
        prepare_dir(folder)


def test_a_second_host_leaves_the_first_in_place(start_host, isolated_home: Path) -> None:
    host = start_host()
    second = run_cli(isolated_home, "host", "--idle", "5", XDG_RUNTIME_DIR=str(host.socket.parent.parent))
    assert second.returncode == 1 and f"already running (pid {host.process.pid})" in second.stderr
    assert host.process.poll() is None and host.socket.exists()


def test_a_session_another_process_writes_is_refused_by_the_host_in_one_line(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, start_host) -> None:
    host = start_host()
    sessions = isolated_home / "data" / "coder-tui" / "sessions"
    sessions.mkdir(parents=True)
    record = sessions / "20260101-000000-abcdef.jsonl"
    record.write_text('{"kind": "meta", "data": {"session_id": "20260101-000000-abcdef", "workspace": "x"}}\n'
                      '{"kind": "message", "data": {"role": "user", "content": "hi"}}\n')
    lock = SessionLock.acquire(record)  # this test process writes it, as `run --resume` would
    try:
        done = run_cli(isolated_home, "run", "--attach", "20260101-000000-abcdef", "more", "--model", fake_llm.model,
                       "--api-base", fake_llm.url, "--api-key", TEST_KEY, XDG_RUNTIME_DIR=str(host.socket.parent.parent))
    finally:
        lock.release()
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "is in use by pid" in done.stderr, done.stderr
    assert fake_llm.requests == []


async def test_resuming_a_session_live_in_the_host_says_to_attach(fake_llm: FakeLLM, ws: Path, start_host,
                                                                  isolated_home: Path) -> None:
    from agent.host.client import HostClient
    from tests.host.conftest import next_of

    host = start_host()
    fake_llm.script(Reply(text="hi"))
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        await client.request("prompt", text="hello")
        await next_of(client, "turn_done")
        done = run_cli(isolated_home, "run", "more", "--resume", opened["session_id"], "--model", fake_llm.model,
                       "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    finally:
        await client.close()
    assert done.returncode == 2
    assert "live in the session host" in done.stderr and f"run --attach {opened['session_id']}" in done.stderr


def test_a_host_started_on_demand_is_reaped_when_it_exits(runtime_dir: Path, isolated_home: Path) -> None:
    """A serve, acp or app that started the host keeps running after the host leaves (idle, or a
    changed install): the host is not left behind as a zombie of it."""
    import signal
    import time

    from agent.host.client import start_host

    path = socket_path()
    prepare_dir(path.parent)
    pid = start_host(path).pid
    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, "the host did not start listening"
        time.sleep(0.05)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists():  # a zombie stays there until its parent reaps it
        assert time.monotonic() < deadline, f"host {pid} left unreaped: {Path(f'/proc/{pid}/stat').read_text()}"
        time.sleep(0.05)
