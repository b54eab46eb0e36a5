"""A folder on disk: confined to its root, atomic writes, .gitignore-aware listing and search.

Every file operation runs in a thread (a slow disk never stalls the event loop, so Ctrl+C is
always heard) and goes through `safefs`: folders opened from the root without following links,
only regular files read. Links are listed as links and never followed by listing or search.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import stat
import threading
import time
from datetime import datetime
from pathlib import Path

from agent import gitsafe
from agent.diffing import FileChange
from agent.workspaces import localwrite, safefs, textio
from agent.workspaces.base import (
    ConflictError,
    DirEntry,
    ProgressFn,
    SearchResult,
    Workspace,
    WorkspaceError,
    check_path_text,
    collect_hits,
)
from agent.workspaces.ignore import IgnoreRules

MAX_READ_BYTES = localwrite.MAX_EDIT_BYTES
MAX_SEARCH_BYTES = 2 * 1024 * 1024
# One lock per file of the process: the base check (is the file still what the edit was computed
# from?) and the write are one step, so that two subagents (each its own workspace on one folder)
# patching one file never lose an edit: the second is refused as stale and re-reads.
_FILE_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def _file_locks(paths: list[str]) -> list[threading.Lock]:
    with _LOCKS_LOCK:
        return [_FILE_LOCKS.setdefault(path, threading.Lock()) for path in sorted(set(paths))]


class LocalWorkspace(Workspace):
    kind = "local"
    can_exec = True
    can_checkpoint = True

    def __init__(self, root: str | Path) -> None:
        super().__init__()
        path = Path(root).expanduser()
        if not path.exists():
            raise WorkspaceError(f"workspace folder {path} does not exist")
        if not path.is_dir():
            raise WorkspaceError(f"workspace {path} is not a folder")
        self._root = Path(os.path.realpath(path))
        self.ignore = IgnoreRules(self._root)
        # Files modified after this moment and never read are someone else's news (see load_for_edit).
        self._opened_ns = time.time_ns()

    @property
    def root(self) -> Path:
        return self._root

    def view(self) -> LocalWorkspace:
        """Another view of this folder, with its own record of what was read (a subagent's: an
        edit computed from a file another view changed since is refused as stale)."""
        return LocalWorkspace(self._root)

    @property
    def label(self) -> str:
        home = str(Path.home())
        text = str(self._root)
        return "~" + text[len(home):] if text.startswith(home + os.sep) else text

    # -- paths ----------------------------------------------------------------------------
    def normalize(self, path: str) -> str:
        return self._locate(path)[0]

    def resolve(self, path: str) -> Path:
        """The real path on disk (symlinks resolved), refused when it leaves the root."""
        return self._locate(path)[1]

    def _locate(self, path: str) -> tuple[str, Path]:
        check_path_text(path)
        raw = path.strip()
        if not raw:
            return "", self._root
        given = Path(raw).expanduser()
        candidate = given if given.is_absolute() else self._root / given
        lexical = Path(os.path.normpath(candidate))
        real = Path(os.path.realpath(candidate))
        for probe in (lexical, real):
            if probe != self._root and not probe.is_relative_to(self._root):
                why = "points outside" if probe is real else "is outside"
                raise WorkspaceError(f"{path!r} {why} the workspace {self._root}; paths must stay inside it")
        rel = lexical.relative_to(self._root).as_posix()
        return ("" if rel == "." else rel), real

    def _inside(self, real: Path) -> tuple[str, ...]:
        """real's names below the root (real is already checked to be inside)."""
        return real.relative_to(self._root).parts

    def _writable(self, path: str) -> tuple[str, ...]:
        rel, real = self._locate(path)
        inside = self._inside(real)
        if ".git" in rel.split("/") or ".git" in inside:
            raise WorkspaceError(f"refusing to write {rel}: files under .git/ belong to git")
        if not inside:
            raise WorkspaceError("a file path is required")
        return inside

    # -- reading --------------------------------------------------------------------------
    async def read_text(self, path: str) -> str:
        return await asyncio.to_thread(self._read, path)

    def _read(self, path: str) -> str:
        rel, real = self._locate(path)
        try:
            data = self._bytes(self._inside(real), MAX_READ_BYTES)
        except FileNotFoundError:
            raise WorkspaceError(f"{rel or path} does not exist") from None
        except safefs.NotRegular as exc:
            if exc.what == "a folder":
                raise WorkspaceError(f"{rel or '.'} is a folder, not a file (use list_dir)") from None
            raise WorkspaceError(f"{rel} cannot be read: {exc.strerror}") from None
        except safefs.TooLarge as exc:
            raise WorkspaceError(f"{rel} is {exc.size // 1024 // 1024} MB; files over 20 MB are not read") from None
        except OSError as exc:
            raise WorkspaceError(f"{rel} cannot be read: {safefs.why(exc)}") from None
        try:
            return textio.decode(data)[0]
        except textio.BinaryFileError:
            raise WorkspaceError(f"{rel} is a binary file; the text tools do not read or edit it") from None

    def _bytes(self, parts: tuple[str, ...], limit: int) -> bytes:
        """A regular file's bytes, opened from the root without following links (OSError: why not)."""
        if not parts:
            raise safefs.NotRegular("a folder")
        with safefs.opened_dir(self._root, parts[:-1]) as fd:
            found = safefs.read_regular(fd, parts[-1], limit)
        if found is None:
            raise FileNotFoundError(errno.ENOENT, "does not exist")
        return found[0]

    async def exists(self, path: str) -> bool:
        return self._locate(path)[1].exists()

    async def is_dir(self, path: str) -> bool:
        return self._locate(path)[1].is_dir()

    async def list_dir(self, path: str = "") -> list[DirEntry]:
        rel, real = self._locate(path)
        return await asyncio.to_thread(self._list_dir, rel, real)

    def _list_dir(self, rel: str, real: Path) -> list[DirEntry]:
        shown = rel or "."
        try:
            with safefs.opened_dir(self._root, self._inside(real)) as fd:
                entries = [self._entry(fd, real, entry) for entry in os.scandir(fd)]
        except FileNotFoundError:
            raise WorkspaceError(f"{shown} does not exist") from None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise WorkspaceError(f"{shown} is not a folder") from None
            raise WorkspaceError(f"cannot list {shown}: {safefs.why(exc)}") from None
        kept = [e for e in entries if not self.ignore.ignored(f"{rel}/{e.name}" if rel else e.name, e.is_dir)]
        return sorted(kept, key=lambda e: (not e.is_dir, e.name.lower()))

    def _entry(self, dir_fd: int, real: Path, entry: os.DirEntry[str]) -> DirEntry:
        """One listing line from lstat: a link says where it points and is never followed."""
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(entry.name, dir_fd=dir_fd)
                resolved = Path(os.path.realpath(real / entry.name))
                inside = resolved == self._root or resolved.is_relative_to(self._root)
                where = "" if inside else ", outside the workspace: not followed"
                return DirEntry(entry.name, False, note=f"link to {target}{where}")
        except OSError as exc:
            return DirEntry(entry.name, False, note=f"cannot be read: {safefs.why(exc)}")
        if stat.S_ISDIR(info.st_mode):
            return DirEntry(entry.name, True)
        if stat.S_ISREG(info.st_mode):
            return DirEntry(entry.name, False, info.st_size)
        return DirEntry(entry.name, False, note=safefs.kind(info.st_mode))

    async def list_files(self, path: str = "") -> list[str]:
        rel, real = self._locate(path)
        if real.is_file():
            return [rel]
        if not real.is_dir():
            raise WorkspaceError(f"{rel or path} does not exist" if not real.exists() else
                                 f"{rel} is neither a regular file nor a folder")
        return await asyncio.to_thread(lambda: list(self.ignore.walk(rel)))

    async def search(self, pattern: re.Pattern[str], path: str = "", max_results: int = 100,
                     progress: ProgressFn | None = None) -> SearchResult:
        files = await self.list_files(path)
        start, real = self._locate(path)
        return await asyncio.to_thread(self._search_files, files, start, self._inside(real), pattern, max_results)

    def _search_files(self, files: list[str], start: str, real_start: tuple[str, ...], pattern: re.Pattern[str],
                      max_results: int) -> SearchResult:
        result = SearchResult()
        skipped = 0
        for rel in files:
            # The walk follows no link below start, so a file's real names are start's plus its own.
            parts = real_start + tuple(name for name in rel[len(start):].split("/") if name)
            try:
                text, _fmt = textio.decode(self._bytes(parts, MAX_SEARCH_BYTES))
            except safefs.TooLarge:
                skipped += 1
                continue
            except (OSError, WorkspaceError, textio.BinaryFileError):
                continue
            result.files_searched += 1
            if collect_hits(result, rel, text, pattern, max_results):
                break
        if skipped:
            result.notes.append(f"{skipped} file(s) over 2 MB were not searched")
        return result

    # -- writing --------------------------------------------------------------------------
    async def check_unread(self, path: str) -> None:
        if path in self._seen:
            return  # load_for_edit compares with what the model read
        try:
            changed = os.stat(self._locate(path)[1]).st_mtime_ns
        except OSError:
            return
        if changed > self._opened_ns:
            at = datetime.fromtimestamp(changed / 1e9).strftime("%H:%M:%S")
            raise ConflictError(
                f"{path} was modified at {at}, after this session started, and you have not read it "
                f"since: read_file {path} first so that your edit keeps those changes. Nothing was changed."
            )

    async def apply(self, changes: list[FileChange]) -> None:
        targets = [self._writable(change.path) for change in changes]
        await asyncio.to_thread(self._apply, changes, targets)
        for change in changes:
            if change.new is None:
                self.forget_read(change.path)
            else:
                self.note_read(change.path, change.new)

    def _apply(self, changes: list[FileChange], targets: list[tuple[str, ...]]) -> None:
        locks = _file_locks([str(self._root.joinpath(*parts)) for parts in targets])
        for lock in locks:  # in sorted order: two writers of the same files never wait on each other
            lock.acquire()
        try:
            self._apply_locked(changes, targets)
        finally:
            for lock in reversed(locks):
                lock.release()

    def _apply_locked(self, changes: list[FileChange], targets: list[tuple[str, ...]]) -> None:
        staged: list[localwrite.Staged] = []
        try:
            for change, parts in zip(changes, targets):
                staged.append(localwrite.stage(self._root, parts, change))
            localwrite.commit(staged)
        finally:
            for item in staged:
                item.close()

    # -- facts ----------------------------------------------------------------------------
    async def read_facts(self) -> dict[str, str]:
        # Two git calls (3-5 ms, up to their timeout on a huge repository) on every prompt: in a
        # thread, so that other sessions of `coder-tui serve` and the app's screen go on meanwhile.
        return await asyncio.to_thread(self.facts)

    def facts(self) -> dict[str, str]:
        facts = {"workspace": str(self._root), "kind": "local folder"}
        # outside any repository (read from the file system) no git process is started to learn it
        outside = gitsafe.outside_repository(self._root)
        found = None if outside else _branch_and_changes(self._root)
        if found is not None:
            branch, dirty = found
            facts["git branch"] = branch
            facts["git status"] = f"{dirty} changed file(s)" if dirty else "clean"
        else:
            facts["git"] = "not a git repository"
        return facts


def _branch_and_changes(root: Path) -> tuple[str, int] | None:
    """The branch, as `git rev-parse --abbrev-ref HEAD` names it (HEAD when detached), and the
    number of changed files, from one `git status --branch` (each git process costs a cold run
    milliseconds before its first request). None: not a repository git will read."""
    status = _git(root, "status", "--porcelain", "--branch")
    lines = (status or "").splitlines()
    head = lines[0][3:] if lines and lines[0].startswith("## ") else ""
    changed = len([line for line in lines if line.strip() and not line.startswith("## ")])
    if not head or head.startswith(("No commits yet", "Initial commit")):
        # git failed, or no commit yet (where rev-parse names no branch): asked as before
        branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
        return None if branch is None else (branch, changed)
    return ("HEAD" if head.startswith("HEAD (no branch)") else head.split("...")[0]), changed


def _git(root: Path, *args: str) -> str | None:
    """Read-only git in the user's repository, with its code-running config switched off."""
    return gitsafe.run(root, *args, timeout=5)
