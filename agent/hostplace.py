"""Where the host listens: `$XDG_RUNTIME_DIR/coder-tui/host-KEY.sock`, else a private folder under the
temp dir (`coder-tui-UID`). The folder is the user's own and 0700, the socket 0600: a folder that
belongs to someone else, or that others may enter, is refused (someone could stand in for the host).

KEY (`host_key`) names what a host serves: the resolved data and config folders, and the digests of
the environment that changes what a session does (provider keys and endpoints, the GitHub token,
CODER_TUI_* settings). A front end finds only a host that reads and writes where it would itself,
with the keys it would use: one from another HOME, XDG_DATA_HOME or key is another host. Its lock,
log and record (`host-KEY.lock`, `.log`, `.json`) sit beside the socket; the record says what the
host serves (folders, pid, when it started), never a secret, for `coder-tui sessions`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from agent import paths

MAX_LINE = 8 * 1024 * 1024  # bytes of one line on the socket: a longer request is refused (agent/host/wire.py)
KEY_LENGTH = 12  # hex digits of the host's key in its file names
# What a host takes from its environment that a session depends on (each value only as a digest):
KEYED_NAMES = ("GITHUB_TOKEN", "GH_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS")
KEYED_SUFFIXES = ("_API_KEY", "_API_BASE", "_BASE_URL", "_API_VERSION")
KEYED_PREFIXES = ("CODER_TUI_", "AWS_", "AZURE_", "VERTEX")
# ...but not what only a front end or the host's own lifetime reads
NOT_KEYED = frozenset({"CODER_TUI_HOST", "CODER_TUI_HOST_IDLE", "CODER_TUI_HOST_OUTBOX", "CODER_TUI_HOST_OUTBOX_LINES",
                       "CODER_TUI_SERVE_TOKEN"})


class HostPlaceError(Exception):
    """The host's folder cannot be used safely (one line: what and why)."""


def host_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "coder-tui"
    return Path(tempfile.gettempdir()) / f"coder-tui-{os.getuid()}"


def served_folders() -> dict[str, str]:
    """The data and config folders this process reads and writes, resolved."""
    return {"data": str(paths.data_dir().resolve()), "config": str(paths.config_dir().resolve())}


def keyed_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """The variables that change what a session does, each as a digest of its value (never the value)."""
    env = dict(os.environ) if env is None else env
    return {name: hashlib.sha256(value.encode()).hexdigest() for name, value in sorted(env.items())
            if value and name not in NOT_KEYED and (name in KEYED_NAMES or name.endswith(KEYED_SUFFIXES)
                                                     or name.startswith(KEYED_PREFIXES))}


def host_key() -> str:
    """What this process's host serves, as KEY_LENGTH hex digits: its folders and keyed environment
    (not the current folder: one host serves every workspace)."""
    what = json.dumps({"folders": served_folders(), "env": keyed_environment()}, sort_keys=True)
    return hashlib.sha256(what.encode()).hexdigest()[:KEY_LENGTH]


def socket_path() -> Path:
    """The socket of the host that serves this process's folders and environment."""
    return host_dir() / f"host-{host_key()}.sock"


def lock_path(socket: Path) -> Path:
    """Held by the running host: a second one started at the same time leaves."""
    return socket.with_suffix(".lock")


def log_path(socket: Path) -> Path:
    """What a host started on demand printed (its stderr)."""
    return socket.with_suffix(".log")


def record_path(socket: Path) -> Path:
    """What the host serves (`HostRecord`), written once it holds its lock."""
    return socket.with_suffix(".json")


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


@dataclass(frozen=True)
class HostRecord:
    """A running host of this user: where it listens and what it serves."""

    socket: Path
    pid: int
    started: float
    data: str
    config: str

    def same_folders(self) -> bool:
        """It reads and writes the folders this process would."""
        return {"data": self.data, "config": self.config} == served_folders()


def write_record(socket: Path) -> None:
    """The host's record beside its socket (0600, replaced whole): folders, pid, start time."""
    record = {"pid": os.getpid(), "started": time.time(), **served_folders()}
    target = record_path(socket)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    fd = paths.open_private(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w") as out:
        json.dump(record, out)
    os.replace(partial, target)


def remove_record(socket: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        record_path(socket).unlink()


def running_hosts() -> list[HostRecord]:
    """This user's hosts that run now (their lock held), in the order they started."""
    folder = host_dir()
    try:
        check_dir(folder)
    except HostPlaceError:
        return []
    found = []
    for record in folder.glob("host*.json"):
        socket = record.with_suffix(".sock")
        if not _locked(lock_path(socket)):
            continue  # a host killed before it could remove its record
        try:
            data = json.loads(record.read_text())
            found.append(HostRecord(socket, int(data["pid"]), float(data["started"]), str(data["data"]),
                                    str(data["config"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours to read
    return sorted(found, key=lambda host: host.started)


def _locked(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
