"""A folder's identity and the user's remembered answer for it (see `trust` for the store).

This module reads nothing itself and imports only the standard library: the config loader asks
it about the workspace (`decision`) with the user's settings in hand, and `trust` writes them.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_GETVERSION = 0x80087601  # FS_IOC_GETVERSION: _IOR('v', 1, long)


def identity(folder: Path) -> str:
    """device:inode[:generation] of the folder (its real path)."""
    fd = os.open(os.path.realpath(folder), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        try:
            generation = struct.unpack("l", fcntl.ioctl(fd, _GETVERSION, b"\0" * 8))[0]
        except OSError as exc:
            if exc.errno not in (errno.ENOTTY, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            return f"{info.st_dev}:{info.st_ino}"
        return f"{info.st_dev}:{info.st_ino}:{generation & 0xFFFFFFFF}"
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Decision:
    """What the user said about a folder: trusted True/False, or None (never asked, or it changed)."""

    trusted: bool | None
    note: str = ""  # why a remembered answer does not apply
    confirmed: list[str] | None = None  # what the trust covered (agent/workspace_input/grants.py digests)


def decision(folder: Path, settings: dict[str, Any]) -> Decision:
    """The remembered answer for `folder` in the user config's settings (`Settings.given()`)."""
    real = os.path.realpath(folder)
    entry = settings.get("folder_trust", {}).get(real)
    if entry is not None:
        try:
            now = identity(folder)
        except OSError:
            return Decision(None)
        if now != entry["identity"]:
            return Decision(None, f"{real} is not the folder you answered for (it was replaced since: "
                                  "identity changed); `coder-tui trust DIR` trusts it again")
        return Decision(bool(entry["trusted"]), confirmed=entry.get("confirmed"))
    legacy = settings.get("trusted_folders", [])
    if any(os.path.realpath(item) == real for item in legacy):
        return Decision(True)  # a path only, nothing confirmed: it covers a folder that grants nothing
    return Decision(None)
