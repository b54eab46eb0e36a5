"""The warm CLI of the tests (tests/zygote.py) behaves as a cold `python -m tui.cli` does."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import os

import pytest

from tests.conftest import ROOT, cli, cli_env, run_cli
from tests.fakellm import FakeLLM, Reply


# The zygote is opt-in (CODER_TUI_TEST_WARM=1, the quick local loop): CI starts every CLI command
# cold, as a user's shell does.
pytestmark = pytest.mark.skipif(not os.environ.get("CODER_TUI_TEST_WARM"),
                                reason="the warm CLI is opt-in: CODER_TUI_TEST_WARM=1 runs these")


def cold(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], env=cli_env(home, **env), capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120)


def forks_of(socket: str) -> int:
    """How many processes run with the zygote's command line (the zygote and its children)."""
    count = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            count += socket.encode() in cmdline.read_bytes()
        except OSError:
            continue
    return count


def test_the_warm_cli_answers_as_the_cold_one(isolated_home: Path, tmp_path: Path) -> None:
    assert cli()[-1].endswith("socket")  # this test forks the zygote
    for args in (["--version"], ["run", "hi", "--workspace", str(tmp_path / "nope")], ["sessions"],
                 ["run", "--max-steps", "0", "hi"]):
        warm, expected = run_cli(isolated_home, *args), cold(isolated_home, *args)
        assert (warm.returncode, warm.stdout, warm.stderr) == (expected.returncode, expected.stdout, expected.stderr)


def test_each_command_gets_its_own_environment(tmp_path: Path) -> None:
    broken, fine = tmp_path / "broken", tmp_path / "fine"
    (broken / "config" / "coder-tui").mkdir(parents=True)
    (broken / "config" / "coder-tui" / "config.toml").write_text("mode = 'yolo'\n")
    first = run_cli(broken, "run", "hi", "--workspace", str(tmp_path))
    assert first.returncode == 2 and f"{broken / 'config'}" in first.stderr and "key `mode`" in first.stderr
    second = run_cli(fine, "run", "hi", "--workspace", str(tmp_path))  # nothing of the first one stays
    assert second.returncode == 2 and "no model configured" in second.stderr
    third = run_cli(fine, "run", "hi", "--workspace", str(tmp_path), CODER_TUI_MODE="yolo")
    assert third.returncode == 2 and "CODER_TUI_MODE must be plan, ask or allow" in third.stderr


def test_a_killed_client_takes_its_child_along(isolated_home: Path, tmp_path: Path) -> None:
    socket = cli()[4]
    held = threading.Event()
    with FakeLLM() as llm:
        llm.script(Reply(text="never", hold=held))
        client = subprocess.Popen(cli("run", "hi", "--workspace", str(tmp_path), "--model", llm.model, "--api-base",
                                      llm.url, "--api-key", "sk-test-x", "--json"), env=cli_env(isolated_home),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while not llm.requests:
                assert time.monotonic() < deadline, "the run never reached the model"
                time.sleep(0.02)
            assert forks_of(socket) == 3  # the zygote, the child running the command and the client
            client.kill()
            client.wait(30)
            while forks_of(socket) != 1:
                assert time.monotonic() < deadline + 30, "the child outlived its client"
                time.sleep(0.02)
        finally:
            held.set()
            if client.poll() is None:
                client.kill()
