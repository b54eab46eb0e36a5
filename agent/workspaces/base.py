"""What a workspace is: where files live, and what it can do.

Tools talk only to a `Workspace`, so the same tools serve a local folder, a GitHub repository
and an OCT room. Paths are workspace-relative POSIX strings (for a room, protocol paths).
Text handed to tools always uses "\n" line ends; a workspace restores the file's own style.
"""

from __future__ import annotations

import hashlib
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent.diffing import FileChange


class WorkspaceError(Exception):
    """A refusal or failure the model (and user) should read: what was wrong, what to do."""


class ConflictError(WorkspaceError):
    """The file changed since the agent saw it; the agent must re-read before editing."""


@dataclass(frozen=True)
class DirEntry:
    name: str
    is_dir: bool
    size: int = 0
    note: str = ""  # shown instead of a size: what a link points to, a FIFO, a device, ...


@dataclass(frozen=True)
class SearchHit:
    path: str
    line: int
    text: str


@dataclass
class SearchResult:
    hits: list[SearchHit] = field(default_factory=list)
    files_searched: int = 0
    truncated: bool = False  # more hits than max_results
    notes: list[str] = field(default_factory=list)  # caps hit, files skipped, ...


ProgressFn = Callable[[str, int, int], None]  # (what, done, total)


def text_digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


class Workspace(ABC):
    """Base class: subclasses implement storage; read tracking is shared."""

    kind: str = "abstract"
    can_exec: bool = False  # shell tools are offered only when True
    can_checkpoint: bool = False  # checkpoints/undo (needs a real folder)
    exec_unavailable_reason: str = "this workspace cannot run commands"

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    # -- identity -------------------------------------------------------------------------
    @property
    @abstractmethod
    def label(self) -> str:
        """Short human name: a folder path, OWNER/REPO@ref, a room id."""

    @property
    def root(self) -> Path | None:
        """The folder on disk, when there is one (shell tools run there)."""
        return None

    def readonly_reason(self) -> str | None:
        """Why edits are refused right now, or None when they are allowed."""
        return None

    def facts(self) -> dict[str, str]:
        """Facts for the system prompt and the status pane."""
        return {"workspace": self.label, "kind": self.kind}

    async def read_facts(self) -> dict[str, str]:
        """`facts()` from async code: a workspace whose facts cost I/O reads them off the loop."""
        return self.facts()

    # -- reading --------------------------------------------------------------------------
    def normalize(self, path: str) -> str:
        """The canonical relative form of a path the model gave (raises when invalid)."""
        check_path_text(path)
        cleaned = path.strip().replace("\\", "/")
        parts = [p for p in cleaned.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise WorkspaceError(f"path {path!r} leaves the workspace ('..' is not allowed)")
        return "/".join(parts)

    @abstractmethod
    async def read_text(self, path: str) -> str:
        """The file's text with "\n" line ends (WorkspaceError when missing or binary)."""

    @abstractmethod
    async def exists(self, path: str) -> bool: ...

    @abstractmethod
    async def is_dir(self, path: str) -> bool: ...

    @abstractmethod
    async def list_dir(self, path: str = "") -> list[DirEntry]: ...

    @abstractmethod
    async def list_files(self, path: str = "") -> list[str]:
        """Every file under path (relative paths), ignoring what .gitignore ignores."""

    async def search(
        self,
        pattern: re.Pattern[str],
        path: str = "",
        max_results: int = 100,
        progress: ProgressFn | None = None,
    ) -> SearchResult:
        """Lines matching pattern; the default reads every listed file through read_text."""
        result = SearchResult()
        files = await self.list_files(path)
        for index, rel in enumerate(files):
            if progress:
                progress("search", index, len(files))
            try:
                text = await self.read_text(rel)
            except WorkspaceError:
                continue
            result.files_searched += 1
            if collect_hits(result, rel, text, pattern, max_results):
                break
        return result

    # -- writing --------------------------------------------------------------------------
    def note_read(self, path: str, text: str) -> None:
        """Remember what the model saw, so edits can refuse stale views."""
        self._seen[path] = text_digest(text)

    def forget_read(self, path: str) -> None:
        self._seen.pop(path, None)

    async def current_reads(self) -> list[str]:
        """The files whose last read still matches them: the model's view of them is current."""
        current = []
        for path, seen in list(self._seen.items()):
            try:
                if await self.exists(path) and text_digest(await self.read_text(path)) == seen:
                    current.append(path)
            except WorkspaceError:
                continue
        return current

    async def reread(self, paths: list[str]) -> None:
        """Take these files as the model now sees them (a rewind put back the files and the
        conversation together, so the conversation's view is of the files as they are again)."""
        for path in paths:
            try:
                text = await self.read_text(path) if await self.exists(path) else None
            except WorkspaceError:
                text = None
            if text is None:
                self.forget_read(path)
            else:
                self.note_read(path, text)

    async def load_for_edit(self, path: str) -> str | None:
        """The text an edit is computed from (None: the file does not exist).

        Refuses when the model read the file and it has changed since.
        """
        if not await self.exists(path):
            return None
        text = await self.read_text(path)
        seen = self._seen.get(path)
        if seen is not None and seen != text_digest(text):
            raise ConflictError(
                f"{path} changed since you last read it; read it again before editing"
            )
        return text

    async def check_unread(self, path: str) -> None:
        """Before an edit not anchored in text the model quotes (a whole-file write, line numbers):
        refuse an existing file the model never read if it changed during the session, so that a
        person's concurrent edit is not overwritten. Only a folder on disk can tell (see local)."""

    @abstractmethod
    async def apply(self, changes: list[FileChange]) -> None:
        """Apply whole-file changes, all or nothing (ConflictError when a base is stale)."""

    async def close(self) -> None:
        """Release resources (connections, processes)."""


MAX_PATH_BYTES = 4096  # Linux PATH_MAX, and NAME_MAX per name: longer paths cannot exist
MAX_NAME_BYTES = 255


def refuse_git_path(path: str) -> None:
    """Files under a `.git` folder belong to git (hooks and config run programs): never edited,
    whatever the workspace (also `.GIT` and `.git.`, which name it on other file systems)."""
    if any(part.rstrip(". ").lower() == ".git" for part in path.replace("\\", "/").split("/")):
        raise WorkspaceError(f"refusing to write {path}: files under .git/ belong to git")


def check_path_text(path: str) -> None:
    """Refuse a path no file system can hold (a NUL byte, too long), before the OS raises."""
    if "\x00" in path:
        raise WorkspaceError(f"path {path[:80]!r} contains a NUL byte (\\x00), which no file name can hold")
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:
        raise WorkspaceError(f"path {path[:80]!r} contains a character no file name can hold") from None
    size, longest = len(raw), max(len(name) for name in raw.split(b"/"))
    if size >= MAX_PATH_BYTES or longest > MAX_NAME_BYTES:
        shown = repr(path) if len(path) <= 60 else repr(path[:60]) + "…"
        raise WorkspaceError(
            f"path {shown} is too long ({size} bytes, longest name {longest}); paths are at most "
            f"{MAX_PATH_BYTES - 1} bytes with names of at most {MAX_NAME_BYTES}"
        )


def collect_hits(
    result: SearchResult, rel: str, text: str, pattern: re.Pattern[str], max_results: int
) -> bool:
    """Add the file's matching lines to result; True once max_results is exceeded."""
    if not pattern.search(text):
        return False
    for number, line in enumerate(text.split("\n"), start=1):
        if pattern.search(line):
            if len(result.hits) >= max_results:
                result.truncated = True
                return True
            result.hits.append(SearchHit(rel, number, line))
    return False
