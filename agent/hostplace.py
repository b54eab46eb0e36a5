"""Where the host listens: `$XDG_RUNTIME_DIR/coder-tui/host.sock`, else a private folder under the
temp dir (`coder-tui-UID`). The folder is the user's own and 0700, the socket 0600: a folder that
belongs to someone else, or that others may enter, is refused (someone could stand in for the host).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

SOCKET_NAME = "host.sock"
LOCK_NAME = "host.lock"  # held by the running host: a second one started at the same time leaves
LOG_NAME = "host.log"  # what a host started on demand printed (its stderr)
MAX_LINE = 8 * 1024 * 1024  # bytes of one line on the socket: a longer request is refused (agent/host/wire.py)


class HostPlaceError(Exception):
    """The host's folder cannot be used safely (one line: what and why)."""


def host_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "coder-tui"
    return Path(tempfile.gettempdir()) / f"coder-tui-{os.getuid()}"


def socket_path() -> Path:
    return host_dir() / SOCKET_NAME


def prepare_dir(folder: Path | None = None) -> Path:
    """The host's folder, made 0700 if missing; HostPlaceError if it is not safely the user's own."""
    folder = folder or host_dir()
    try:
        folder.mkdir(mode=0o700, parents=False, exist_ok=True)
    except OSError as exc:
        raise HostPlaceError(f"cannot make the session host's folder {folder}: {exc.strerror}") from None
    check_dir(folder)
    return folder


def check_dir(folder: Path) -> None:
    """HostPlaceError unless `folder` is a real folder (not a link) of this user that only they can enter."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise HostPlaceError(f"the session host's folder {folder} cannot be read: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise HostPlaceError(f"the session host's folder {folder} is not a folder (a link or a file); "
                             "remove it and start again")
    if info.st_uid != os.getuid():
        raise HostPlaceError(f"the session host's folder {folder} belongs to another user (uid {info.st_uid}); "
                             "refusing to use it")
    if info.st_mode & 0o077:
        try:
            os.chmod(folder, 0o700)  # ours: tighten it
        except OSError as exc:
            raise HostPlaceError(f"the session host's folder {folder} is open to others and cannot be made "
                                 f"private: {exc.strerror}") from None
