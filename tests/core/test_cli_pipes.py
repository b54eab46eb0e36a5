"""Every command ends quietly when stdout's reader leaves early (`coder-tui sessions | head`):
one guard in tui/cli.py's main, exit code 141 as for a program SIGPIPE ends, nothing on stderr."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY, cli, cli_env
from tests.fakellm import FakeLLM, Reply


def _with_reader_gone(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `coder-tui ARGS` with a stdout nobody reads any more: its first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(cli(*args), env=cli_env(home), stdout=write_end, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, timeout=120, cwd=cwd)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("args", [["sessions"], ["profiles"], ["skills"], ["trust", "--list"], ["undo", "--list"],
                                  ["tasks", "list"], ["run", "--help"]])
def test_a_reader_that_left_ends_every_command_quietly(args: list[str], isolated_home: Path, tmp_path: Path) -> None:
    done = _with_reader_gone(isolated_home, *args, cwd=tmp_path)
    assert done.stderr == "" and done.returncode in (0, 141), (done.returncode, done.stderr)


def test_a_run_whose_reader_left_ends_quietly(isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.script(Reply(text="A long answer. " * 200))
    done = _with_reader_gone(isolated_home, "run", "say it", "--json", "--workspace", str(tmp_path), "--model",
                             fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY, "--mode", "allow")
    assert done.returncode == 141 and done.stderr == "", done.stderr
