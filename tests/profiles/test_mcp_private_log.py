"""An MCP server's stderr log is the user's alone: 0600 in a 0700 cache folder (issue 20: 0644 in
0755, against the README), whatever the umask and however the folders were left before."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

from agent import paths
from tests.fakellm import Reply


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_the_mcp_log_and_the_cache_folder_are_private(make_session: Any) -> None:
    old = os.umask(0o022)
    try:
        paths.cache_dir().mkdir(parents=True, mode=0o755)
        os.chmod(paths.cache_dir(), 0o755)  # as an earlier version left it
        noisy = {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('token=ghp_x\\n')"]}
        h = make_session(mcp_servers={"noisy": noisy})
        h.script(Reply(text="ok"))
        await h.run("hi")
    finally:
        os.umask(old)
    log = paths.cache_dir() / "mcp" / "noisy.log"
    assert log.exists()
    assert _mode(log) == 0o600
    assert _mode(log.parent) == 0o700 and _mode(paths.cache_dir()) == 0o700
