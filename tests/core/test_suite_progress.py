"""The suite says how far it is (tests/progress.py): with `-n 2` (and `-q`, as pyproject.toml gives) a line every half minute, here
every event (CODER_TUI_TEST_PROGRESS=0), from a real pytest run of a small module."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import ROOT


def test_a_run_with_two_workers_prints_progress_lines_with_counts() -> None:
    env = {**os.environ, "CODER_TUI_TEST_PROGRESS": "0"}
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/core/test_diffing.py", "-n", "2",
                           "-p", "no:randomly"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    counts = [(int(a), int(b)) for a, b in re.findall(r"^\[progress\] (\d+)/(\d+) tests in \d+", done.stdout, re.M)]
    assert counts, done.stdout[-2000:]
    total = int(re.search(r"(\d+) passed", done.stdout).group(1))  # type: ignore[union-attr]
    assert all(of == total for _, of in counts)
    assert [n for n, _ in counts] == sorted(n for n, _ in counts) and counts[-1][0] >= total - 1
    assert "running: tests/core/test_diffing.py::" in done.stdout
