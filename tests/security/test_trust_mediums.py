"""Issue 34's medium findings, each as a hostile folder name or another local user would try them
(the sandbox's system sockets are in test_sandbox_boundary.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize("name", ["ws\nExecStartPre=touch pwned", "ws%h", "ws$HOME", "ws'quote",
                                  "ws\u2028line"])
def test_tasks_install_refuses_a_folder_name_a_unit_file_would_read_as_more(tmp_path: Path, isolated_home: Path,
                                                                             name: str) -> None:
    root = tmp_path / name
    root.mkdir()
    for extra in ([], ["--cron"]):
        done = run_cli(isolated_home, "tasks", "install", "--workspace", str(root), "--yes", *extra)
        assert done.returncode == 2 and "rename the folder" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "ExecStartPre" not in done.stdout
    units = isolated_home / "config" / "systemd" / "user"
    assert not units.exists() or not list(units.iterdir())
    assert os.path.isdir(root)
