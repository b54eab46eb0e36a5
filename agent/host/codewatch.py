"""What code a host runs, so that it can tell when what is installed has changed under it.

A host lives for minutes after its last client (agent/host/server.py). Without this, after an
upgrade of coder-tui or of a library (or an edit of an editable install), `run`, `attach`, `acp`
and `serve` kept going through a host still running the old code for up to its idle time. The
host now compares, every few seconds, the stamp it took as it started with the installed one:
each `agent` source file's size and time, and the time of each site-packages folder (an install
or an upgrade there renames its dist-info folder). When they differ it stops taking clients at
once and leaves when its last one is done (Host.retire).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

CHECK_EVERY = 3.0  # seconds between two looks at what is installed (about 3 ms each)


def installed_code() -> str:
    """A digest of the `agent` package's source files as they are on disk now, and of the
    site-packages folders the interpreter imports from."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                digest.update(_stat_line(os.path.join(folder, name)))
    for entry in sys.path:
        if entry.endswith("site-packages"):
            digest.update(_stat_line(entry))
    return digest.hexdigest()[:32]


def _stat_line(path: str) -> bytes:
    try:
        info = os.stat(path)
    except OSError:
        return f"{path}:-\n".encode()
    return f"{path}:{info.st_size}:{info.st_mtime_ns}\n".encode()
