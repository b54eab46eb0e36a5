"""A folder on disk: confined to its root, atomic writes, .gitignore-aware listing and search."""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agent import gitsafe
from agent.diffing import FileChange
from agent.workspaces import textio
from agent.workspaces.base import (
    ConflictError,
    DirEntry,
    ProgressFn,
    SearchResult,
    Workspace,
    WorkspaceError,
    collect_hits,
)
from agent.workspaces.ignore import IgnoreRules

MAX_READ_BYTES = 20 * 1024 * 1024
MAX_SEARCH_BYTES = 2 * 1024 * 1024


@dataclass
class _Staged:
    change: FileChange
    target: Path
    original: bytes | None  # bytes on disk before, None when the file is new
    mode: int | None
    temp: Path | None  # None for deletions


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

    @property
    def root(self) -> Path:
        return self._root

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

    def _writable(self, path: str) -> Path:
        rel, real = self._locate(path)
        inside = real.relative_to(self._root).parts if real != self._root else ()
        if ".git" in rel.split("/") or ".git" in inside:
            raise WorkspaceError(f"refusing to write {rel}: files under .git/ belong to git")
        if real == self._root:
            raise WorkspaceError("a file path is required")
        return real

    # -- reading --------------------------------------------------------------------------
    async def read_text(self, path: str) -> str:
        return self._read(path)[0]

    def _read(self, path: str) -> tuple[str, textio.TextFormat, bytes]:
        rel, real = self._locate(path)
        if not real.exists():
            raise WorkspaceError(f"{rel or path} does not exist")
        if real.is_dir():
            raise WorkspaceError(f"{rel} is a folder, not a file (use list_dir)")
        size = real.stat().st_size
        if size > MAX_READ_BYTES:
            raise WorkspaceError(f"{rel} is {size // 1024 // 1024} MB; files over 20 MB are not read")
        data = real.read_bytes()
        try:
            text, fmt = textio.decode(data)
        except textio.BinaryFileError:
            raise WorkspaceError(f"{rel} is a binary file; the text tools do not read or edit it") from None
        return text, fmt, data

    async def exists(self, path: str) -> bool:
        return self._locate(path)[1].exists()

    async def is_dir(self, path: str) -> bool:
        return self._locate(path)[1].is_dir()

    async def list_dir(self, path: str = "") -> list[DirEntry]:
        rel, real = self._locate(path)
        if not real.is_dir():
            raise WorkspaceError(f"{rel or path} is not a folder")
        entries = []
        for entry in os.scandir(real):
            child = f"{rel}/{entry.name}" if rel else entry.name
            is_dir = entry.is_dir()
            if self.ignore.ignored(child, is_dir):
                continue
            size = 0 if is_dir else _size(entry)
            entries.append(DirEntry(entry.name, is_dir, size))
        return sorted(entries, key=lambda e: (not e.is_dir, e.name.lower()))

    async def list_files(self, path: str = "") -> list[str]:
        rel, real = self._locate(path)
        if real.is_file():
            return [rel]
        if not real.is_dir():
            raise WorkspaceError(f"{rel or path} does not exist")
        return await asyncio.to_thread(lambda: list(self.ignore.walk(rel)))

    async def search(self, pattern: re.Pattern[str], path: str = "", max_results: int = 100,
                     progress: ProgressFn | None = None) -> SearchResult:
        files = await self.list_files(path)
        return await asyncio.to_thread(self._search_files, files, pattern, max_results)

    def _search_files(self, files: list[str], pattern: re.Pattern[str], max_results: int) -> SearchResult:
        result = SearchResult()
        skipped = 0
        for rel in files:
            real = self._root / rel
            try:
                if real.stat().st_size > MAX_SEARCH_BYTES:
                    skipped += 1
                    continue
                data = real.read_bytes()
                text, _fmt = textio.decode(data)
            except (OSError, textio.BinaryFileError):
                continue
            result.files_searched += 1
            if collect_hits(result, rel, text, pattern, max_results):
                break
        if skipped:
            result.notes.append(f"{skipped} file(s) over 2 MB were not searched")
        return result

    # -- writing --------------------------------------------------------------------------
    async def apply(self, changes: list[FileChange]) -> None:
        staged: list[_Staged] = []
        try:
            for change in changes:
                staged.append(self._stage(change))
            self._commit(staged)
        finally:
            for item in staged:
                if item.temp is not None and item.temp.exists():
                    item.temp.unlink()
        for change in changes:
            if change.new is None:
                self.forget_read(change.path)
            else:
                self.note_read(change.path, change.new)

    def _stage(self, change: FileChange) -> _Staged:
        """Check the change's base against the disk and write its bytes to a temp file."""
        target = self._writable(change.path)
        original, mode, fmt = None, None, textio.TextFormat()
        if target.exists():
            if target.is_dir():
                raise WorkspaceError(f"{change.path} is a folder")
            text, fmt, original = self._read(change.path)
            mode = target.stat().st_mode & 0o7777
            if change.old is None or text != change.old:
                raise ConflictError(f"{change.path} changed on disk while the edit was prepared; read it again")
        elif change.old is not None:
            raise ConflictError(f"{change.path} was deleted while the edit was prepared")
        if change.new is None:
            return _Staged(change, target, original, mode, None)
        try:
            data = textio.encode(change.new, fmt)
        except UnicodeEncodeError as exc:
            raise WorkspaceError(
                f"{change.path} is {fmt.encoding}-encoded and cannot hold {exc.object[exc.start:exc.end]!r}"
            ) from None
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        return _Staged(change, target, original, mode, Path(temp))

    def _commit(self, staged: list[_Staged]) -> None:
        """Rename every staged file into place; on failure put back what was already done."""
        done: list[_Staged] = []
        try:
            for item in staged:
                if item.temp is None:
                    item.target.unlink()
                else:
                    os.replace(item.temp, item.target)
                done.append(item)
        except OSError as exc:
            for item in reversed(done):
                _restore(item)
            raise WorkspaceError(f"could not write {item.change.path}: {exc.strerror}; nothing was changed") from None

    # -- facts ----------------------------------------------------------------------------
    def facts(self) -> dict[str, str]:
        facts = {"workspace": str(self._root), "kind": "local folder"}
        branch = _git(self._root, "rev-parse", "--abbrev-ref", "HEAD")
        if branch is not None:
            status = _git(self._root, "status", "--porcelain") or ""
            dirty = len([line for line in status.splitlines() if line.strip()])
            facts["git branch"] = branch
            facts["git status"] = f"{dirty} changed file(s)" if dirty else "clean"
        else:
            facts["git"] = "not a git repository"
        return facts


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat().st_size
    except OSError:
        return 0


def _restore(item: _Staged) -> None:
    if item.original is None:
        item.target.unlink(missing_ok=True)
        return
    fd, temp = tempfile.mkstemp(dir=item.target.parent, prefix=f".{item.target.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(item.original)
    if item.mode is not None:
        os.chmod(temp, item.mode)
    os.replace(temp, item.target)


def _git(root: Path, *args: str) -> str | None:
    """Read-only git in the user's repository, with its code-running config switched off."""
    return gitsafe.run(root, *args, timeout=5)
