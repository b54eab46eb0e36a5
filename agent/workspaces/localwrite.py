"""All-or-nothing writes into a folder, each relative to its parent folder's descriptor.

Every file is staged first (its base checked against the disk, its new bytes written to a temp
file beside it), then renamed into place; a failure puts back what was already renamed. The
parent folder is opened once, from the root without following links, and the check, the temp
file and the rename all use that descriptor, so a link swapped in meanwhile cannot carry the
write outside the workspace.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agent.diffing import FileChange
from agent.workspaces import safefs, textio
from agent.workspaces.base import ConflictError, WorkspaceError

MAX_EDIT_BYTES = 20 * 1024 * 1024


@dataclass
class Staged:
    change: FileChange
    dir_fd: int
    name: str
    original: bytes | None  # bytes on disk before, None when the file is new
    mode: int | None  # its permissions, kept by the new content
    temp: str | None  # the staged content's name; None for deletions and once renamed

    def close(self) -> None:
        if self.temp is not None:
            safefs.discard(self.dir_fd, self.temp)
            self.temp = None
        os.close(self.dir_fd)


def stage(root: Path, parts: tuple[str, ...], change: FileChange) -> Staged:
    """Check change's base against the disk and write its new bytes beside the file."""
    try:
        with safefs.opened_dir(root, parts[:-1], create=change.new is not None) as fd:
            dir_fd = os.dup(fd)
    except FileNotFoundError:  # only for deletions: the folder itself is gone
        raise ConflictError(f"{change.path} was deleted while the edit was prepared") from None
    except OSError as exc:
        raise WorkspaceError(f"cannot write {change.path}: {safefs.why(exc)}; nothing was changed") from None
    item = Staged(change, dir_fd, parts[-1], None, None, None)
    try:
        _fill(item)
    except BaseException:
        item.close()
        raise
    return item


def _fill(item: Staged) -> None:
    change = item.change
    try:
        found = safefs.read_regular(item.dir_fd, item.name, MAX_EDIT_BYTES)
    except safefs.NotRegular as exc:
        raise WorkspaceError(f"{change.path} is {exc.what}; only regular files are edited") from None
    except OSError as exc:
        raise WorkspaceError(f"cannot write {change.path}: {safefs.why(exc)}; nothing was changed") from None
    fmt = textio.TextFormat()
    if found is not None:
        item.original, item.mode = found
        try:
            text, fmt = textio.decode(item.original)
        except textio.BinaryFileError:
            raise WorkspaceError(f"{change.path} is a binary file; the text tools do not edit it") from None
        if change.old is None or text != change.old:
            raise ConflictError(f"{change.path} changed on disk while the edit was prepared; read it again")
    elif change.old is not None:
        raise ConflictError(f"{change.path} was deleted while the edit was prepared")
    if change.new is None:
        return
    try:
        data = (textio.encode(change.new, fmt) if item.original is None
                else textio.encode_edit(item.original, change.new))
    except UnicodeEncodeError as exc:
        raise WorkspaceError(
            f"{change.path} is {fmt.encoding}-encoded and cannot hold {exc.object[exc.start:exc.end]!r}"
        ) from None
    try:
        item.temp = safefs.write_temp(item.dir_fd, item.name, data, item.mode)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {change.path}: {safefs.why(exc)}; nothing was changed") from None


def commit(staged: list[Staged]) -> None:
    """Rename every staged file into place; on failure put back what was already done."""
    done: list[Staged] = []
    for item in staged:
        try:
            if item.temp is None:
                safefs.remove(item.dir_fd, item.name)
            else:
                safefs.replace(item.dir_fd, item.temp, item.name)
                item.temp = None
        except OSError as exc:
            for finished in reversed(done):
                _restore(finished)
            raise WorkspaceError(
                f"could not write {item.change.path}: {safefs.why(exc)}; nothing was changed"
            ) from None
        done.append(item)


def _restore(item: Staged) -> None:
    if item.original is None:
        safefs.discard(item.dir_fd, item.name)
        return
    temp = safefs.write_temp(item.dir_fd, item.name, item.original, item.mode)
    safefs.replace(item.dir_fd, temp, item.name)
