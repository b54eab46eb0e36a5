"""One writer per session: an advisory lock on a file beside the session's JSONL.

The lock is `flock` on `<id>.lock`, so the kernel releases it when its process dies, however it
dies (`kill -9` included): a lock nobody holds is free, whatever the file says. The file names
its holder (pid, front end, since when) for the message a second opener gets. A holder that ends
cleanly empties and removes it; finding the holder line of a process that is gone means it was
killed, and the lock is taken over (the caller may say so).

Removing a lock file while another process opens it is the classic race of this scheme: after
taking the lock, the opener checks that the path still names the file it locked, and tries again
when it does not.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from agent import paths

FRONT_ENDS = ("run", "serve", "acp", "room", "undo", "task", "tasks", "host", "fleet")


class SessionLocked(Exception):
    """Another live process writes this session."""


@dataclass(frozen=True)
class Holder:
    pid: int
    front_end: str
    since: float
    host: str = ""

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid} ({self.front_end}, since {when})"


def front_end() -> str:
    """What this process is, as a user would name it: `coder-tui run`, `coder-tui` (the app)..."""
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    command = args[0] if args and args[0] in FRONT_ENDS else ""
    return f"coder-tui {command}".strip()


def lock_path(session_file: Path) -> Path:
    return session_file.with_suffix(".lock")


class SessionLock:
    """The held lock on one session file; `release()` lets the next opener in."""

    def __init__(self, path: Path, fd: int, took_over: Holder | None) -> None:
        self.path = path
        self._fd: int | None = fd
        self.took_over = took_over  # the holder of a lock left by a killed process

    @classmethod
    def acquire(cls, session_file: Path) -> SessionLock:
        """Lock `session_file` for this process; SessionLocked (naming the holder) if it is in use."""
        path = lock_path(session_file)
        for _ in range(20):  # another opener may remove the file between our open and our lock
            fd = paths.open_private(path, os.O_RDWR | os.O_CREAT)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read(fd)
                os.close(fd)
                raise SessionLocked(in_use(session_file, holder)) from None
            if _same_file(fd, path):
                left = _read(fd)
                _write(fd)
                return cls(path, fd, left)
            os.close(fd)
        raise SessionLocked(f"could not lock session {session_file.stem}: its lock file keeps changing")

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
            self.path.unlink(missing_ok=True)  # while still locked: see the module's note on the race
        except OSError:
            pass  # a lock file left behind is harmless: nobody holds its lock
        finally:
            os.close(fd)


def in_use(session_file: Path, holder: Holder | None) -> str:
    """The one-line message a second opener gets."""
    who = holder.describe() if holder else "another process"
    if holder is not None and holder.front_end == "coder-tui host":  # live in the session host: join it there
        return (f"session {session_file.stem} is live in the session host ({who}); join it with "
                f"`coder-tui run --attach {session_file.stem} PROMPT`, or start a new session")
    return f"session {session_file.stem} is in use by {who}; close it there first, or start a new session"


def holder_of(session_file: Path) -> Holder | None:
    """Who holds the session's lock now (None when nobody does); a lock left by a dead process is free."""
    path = lock_path(session_file)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(fd) or Holder(0, "another process", time.time())
        return None
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _read(fd: int) -> Holder | None:
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode("utf-8")) if raw.strip() else None
        if not isinstance(data, dict):
            return None
        return Holder(int(data["pid"]), str(data["front_end"]), float(data["since"]), str(data.get("host", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(fd: int) -> None:
    info = {"pid": os.getpid(), "front_end": front_end(), "since": time.time(), "host": socket.gethostname()}
    data = json.dumps(info).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data + b"\n", 0)
