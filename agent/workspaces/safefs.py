"""File operations that stay inside a folder even while the tree changes under them.

A path checked with `realpath` can change before it is used: a folder swapped for a symbolic link
would carry a write outside. Here every folder is opened relative to its parent's descriptor,
starting at the root and never following a link (`O_NOFOLLOW`), and files are read, created,
renamed and removed relative to the folder's descriptor. The object checked is the object used:
a link swapped in makes the open fail instead of leading elsewhere.

Only regular files are read. A FIFO would block the reader forever and a device can be endless,
so both (and sockets) are refused from their `lstat`, before anything opens them.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_SPECIAL = {
    stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFLNK: "a symbolic link",
}


class NotRegular(OSError):
    """The name is something other than a regular file: `what` says what."""

    def __init__(self, what: str) -> None:
        super().__init__(errno.EINVAL, f"it is {what}; only regular files are read")
        self.what = what


class TooLarge(OSError):
    def __init__(self, size: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes")
        self.size = size


def kind(mode: int) -> str:
    """What a non-regular file is, in words ('a folder', 'a named pipe (FIFO)', ...)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    return _SPECIAL.get(stat.S_IFMT(mode), "not a regular file")


def why(exc: OSError) -> str:
    """A short reason for a failed file operation, for messages the model reads."""
    if isinstance(exc, (NotRegular, TooLarge)):
        return str(exc.strerror)
    if exc.errno == errno.ELOOP:
        return "a folder on the way is a symbolic link (it changed after the path was checked)"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is not a folder"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)


@contextmanager
def opened_dir(root: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """A descriptor of root/parts, each part opened without following links (create: mkdir)."""
    fd = os.open(root, _DIR)
    try:
        for part in parts:
            try:
                child = _open_child(fd, part)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile by someone else: open what is there (never a link)
                child = _open_child(fd, part)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_child(fd: int, part: str) -> int:
    try:
        return os.open(part, _DIR | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        # Linux says ENOTDIR (or ELOOP) for a link opened with O_NOFOLLOW: say which it was.
        if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(fd, part):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), part) from None
        raise


def _is_link(fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_regular(dir_fd: int, name: str, limit: int) -> tuple[bytes, int] | None:
    """(bytes, mode) of the regular file name in dir_fd; None when there is none.

    Raises NotRegular for folders, links and special files, TooLarge above limit bytes.
    """
    try:
        before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(before.st_mode):
        raise NotRegular(kind(before.st_mode))
    fd = os.open(name, _FILE, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped between the lstat and the open
            raise NotRegular(kind(info.st_mode))
        if info.st_size > limit:
            raise TooLarge(info.st_size)
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise TooLarge(total)
        return b"".join(chunks), stat.S_IMODE(info.st_mode)
    finally:
        os.close(fd)


def read_small(path: Path, limit: int = 1 << 20) -> bytes | None:
    """A small regular file's bytes, or None when missing, special, a link or too large."""
    try:
        with opened_dir(path.parent, ()) as fd:
            found = read_regular(fd, path.name, limit)
    except OSError:
        return None
    return None if found is None else found[0]


def write_temp(dir_fd: int, name: str, data: bytes, mode: int | None) -> str:
    """Write data to a new hidden file beside name and return its name.

    mode None (a new file) lets the kernel apply the umask to 0666, as editors do; otherwise
    the file gets exactly mode (an existing file's permissions).
    """
    temp = f".{name[:40]}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o666 if mode is None else 0o600, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        discard(dir_fd, temp)
        raise
    os.close(fd)
    return temp


def replace(dir_fd: int, temp: str, name: str) -> None:
    """Atomically put temp in name's place (a link at name is replaced, never followed)."""
    os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def remove(dir_fd: int, name: str) -> None:
    os.unlink(name, dir_fd=dir_fd)


def discard(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
