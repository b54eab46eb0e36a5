"""A full data folder stops the run before it changes anything, with a clear message (issue 20).

The data folder is a real, tiny tmpfs mounted for the test (root only), filled so that either the
session record or the first checkpoint runs out of room: the real write paths, no patching."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import cli, cli_env, write_files
from tests.fakellm import FakeLLM, Reply, call


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.parametrize(("left_kb", "failed"), [(6, "/sessions/"), (56, "/checkpoints/")],
                         ids=["record-full", "checkpoint-full"])
def test_full_data_folder_stops_before_any_change(fake_llm: FakeLLM, tmp_path: Path, small_disk: Path,
                                                  left_kb: int, failed: str) -> None:
    ws = write_files(tmp_path / "ws", {"a.py": "def f():\n    return 1\n"})
    with open(small_disk / "filler", "wb") as filler:
        filler.write(b"\0" * (256 - left_kb) * 1024)
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="a.py", content="x = 2\n" * 50)]),
                    Reply(text="Done."))
    done = subprocess.run(cli("run", "change it", "--workspace", str(ws), "--model", fake_llm.model, "--api-base",
                              fake_llm.url, "--api-key", "sk-test-0000", "--mode", "allow"),
                          env=cli_env(small_disk), capture_output=True, text=True, timeout=240)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "stopped before changing any file" in done.stderr and "the disk is full" in done.stderr
    assert f"coder-tui's data folder ({small_disk}/data/coder-tui{failed}" in done.stderr
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n"  # nothing applied
    sessions = small_disk / "data" / "coder-tui" / "sessions"
    assert not list(sessions.glob("*.lock"))  # released at the end
    assert not any(p.name.endswith(".git") and not (p / "HEAD").exists()
                   for p in (small_disk / "data" / "coder-tui" / "checkpoints").glob("*"))  # no half-made store
