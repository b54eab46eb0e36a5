"""`coder-tui tasks worker` (due tasks run without a live app, as they come due) and `tasks install`
(a systemd user timer written after it is shown)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.conftest import TEST_KEY, cli, cli_env, run_cli
from tests.fakellm import Reply
from tests.knowledge.test_tasks import WAIT, store_for


def status_of(root: Path, task_id: str) -> str:
    store = store_for(root)
    try:
        return store.get(task_id).status
    finally:
        store.close()


def wait_until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_the_worker_runs_tasks_as_they_come_due_until_ctrl_c(tmp_path: Path, fake_llm: Any,
                                                              isolated_home: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    store = store_for(root)
    first = store.schedule("count the files", delay_seconds=0)
    store.close()
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    command = cli("tasks", "worker", "--interval", "0.5", "--mode", "allow", "--workspace", str(root),
                  "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    worker = subprocess.Popen(command, env=cli_env(isolated_home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        wait_until(lambda: status_of(root, first.id) == "completed", "the first task")
        store = store_for(root)
        second = store.schedule("and again", delay_seconds=0)  # scheduled while the worker waits
        store.close()
        wait_until(lambda: status_of(root, second.id) == "completed", "the task scheduled later")
        worker.send_signal(signal.SIGINT)
        out, err = worker.communicate(timeout=WAIT)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0, err
    assert "worker stopped" in out and f"running task {second.id}: and again" in err
    assert "Traceback" not in err


def test_install_shows_the_timer_and_writes_it_only_when_told(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    shown = run_cli(isolated_home, "tasks", "install", "--workspace", str(root), "--every", "15")
    assert shown.returncode == 1 and "run again with --yes" in shown.stderr
    assert "OnCalendar=*:0/15" in shown.stdout and f"--workspace {root}" in shown.stdout
    units = isolated_home / "config" / "systemd" / "user"
    assert not units.exists() or not list(units.iterdir())
    done = run_cli(isolated_home, "tasks", "install", "--workspace", str(root), "--yes")
    assert done.returncode == 0, done.stderr
    [service] = units.glob("coder-tui-tasks-*.service")
    [timer] = units.glob("coder-tui-tasks-*.timer")
    assert f"tasks run-due --workspace {root} --mode allow" in service.read_text()
    assert "OnCalendar=*:0/10" in timer.read_text() and timer.name in done.stdout
    bad = run_cli(isolated_home, "tasks", "install", "--workspace", str(root), "--every", "90", "--yes")
    assert bad.returncode == 2 and "--every is minutes, 1 to 59" in bad.stderr
