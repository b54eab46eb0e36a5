"""Reading a file that a workspace file names, inside the workspace and nowhere else.

A profile's `system_prompt_file`, an `@path` import, a command's or skill's body: the name comes
from the repository, so it is resolved against the workspace root only. Refused, with the reason:
an absolute or `~` path, a `..` part, a link (at any depth) that leads out of the workspace,
anything but a regular file (a FIFO would block, `/dev/zero` never ends), and a file above the
size cap. The file is opened part by part without following links (agent/workspaces/safefs.py),
so a link swapped in after the check makes the open fail instead of leading out.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from agent.workspaces import safefs

PROMPT_CAP = 64 * 1024  # bytes: a prompt file, an instructions file


class OutsideWorkspace(Exception):
    """A named file was refused; the message says which and why (for a one-line notice)."""


def inside(root: Path, name: str) -> list[str]:
    """The parts of `name` below the real root, links inside the workspace resolved.

    Raises OutsideWorkspace for names that are absolute, climb with `..`, or lead out through a link.
    """
    if not name or not name.strip():
        raise OutsideWorkspace("the file name is empty")
    pure = PurePosixPath(name)
    if pure.is_absolute() or name.startswith("~") or "\\" in name or "\0" in name:
        raise OutsideWorkspace(f"{name!r} is not a path inside the workspace (absolute paths are refused)")
    if ".." in pure.parts:
        raise OutsideWorkspace(f"{name!r} climbs out with `..` (only paths inside the workspace are read)")
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, *pure.parts))
    if os.path.commonpath([real_root, real]) != real_root or real == real_root:
        raise OutsideWorkspace(f"{name!r} is a link that leads out of the workspace")
    return list(PurePosixPath(os.path.relpath(real, real_root)).parts)


def read_inside(root: Path, name: str, cap: int = PROMPT_CAP, cut: bool = False) -> str | None:
    """The text of workspace file `name` (None when there is none); OutsideWorkspace when refused.
    A file above `cap` bytes is refused, or with `cut` read up to the cap."""
    parts = inside(root, name)
    try:
        with safefs.opened_dir(Path(os.path.realpath(root)), parts[:-1]) as fd:
            data = _read_regular(fd, parts[-1], cap, cut)
    except FileNotFoundError:
        return None
    except safefs.TooLarge as exc:
        raise OutsideWorkspace(f"{name!r} is {exc.size} bytes; at most {cap} are read") from None
    except OSError as exc:
        raise OutsideWorkspace(f"{name!r} cannot be read: {safefs.why(exc)}") from None
    if data is None:
        return None
    try:
        return data.decode("utf-8", errors="ignore" if cut else "strict")
    except UnicodeDecodeError:
        raise OutsideWorkspace(f"{name!r} is not UTF-8 text") from None


def _read_regular(dir_fd: int, name: str, cap: int, cut: bool) -> bytes | None:
    """At most cap bytes (cut) or the whole file (TooLarge above cap) of a regular file, never a link."""
    if not cut:
        found = safefs.read_regular(dir_fd, name, cap)
        return None if found is None else found[0]
    before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not stat.S_ISREG(before.st_mode):
        raise safefs.NotRegular(safefs.kind(before.st_mode))
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise safefs.NotRegular(safefs.kind(os.fstat(fd).st_mode))
        return os.read(fd, cap)
    finally:
        os.close(fd)


def listing(root: Path, folder: str, suffix: str) -> list[str]:
    """The names (relative to root) of the `suffix` files in workspace folder `folder`, sorted;
    none when the folder is missing. OutsideWorkspace when the folder leads out of the workspace."""
    parts = inside(root, folder)
    try:
        with safefs.opened_dir(Path(os.path.realpath(root)), parts) as fd:
            names = sorted(name for name in os.listdir(fd) if name.endswith(suffix))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise OutsideWorkspace(f"{folder!r} cannot be listed: {safefs.why(exc)}") from None
    return [f"{folder}/{name}" for name in names]
