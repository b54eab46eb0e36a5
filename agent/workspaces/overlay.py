"""An in-memory overlay over another workspace: reads see the overlay first, writes stay in memory.

An editor that applies the agent's edits itself (the SSE server's `"apply": "client"`) wants the
agent to see its unsaved buffers and to leave the files on disk alone: the overlay is seeded
with the buffers' text, every edit lands in the overlay (and is reported as a diff for the editor
to apply), and the base workspace is only read. Shell tools are not offered: a command would see
the files on disk, not the overlay.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent.diffing import FileChange
from agent.workspaces.base import (
    ConflictError,
    DirEntry,
    ProgressFn,
    SearchResult,
    Workspace,
    WorkspaceError,
    collect_hits,
    refuse_git_path,
)


class OverlayWorkspace(Workspace):
    kind = "overlay"
    can_exec = False
    can_checkpoint = False
    exec_unavailable_reason = ("the editor applies the edits (apply: client), so commands would not see them; "
                               "describe the command for the user to run")

    def __init__(self, base: Workspace, files: dict[str, str] | None = None) -> None:
        super().__init__()
        self.base = base
        self._files: dict[str, str | None] = {}  # path -> text; None: deleted in the overlay
        for path, text in (files or {}).items():
            self.seed(path, text)

    def seed(self, path: str, text: str) -> None:
        """Take the editor's text of a file (its unsaved buffer) as the file's content."""
        self._files[self.normalize(path)] = text.replace("\r\n", "\n")

    @property
    def changed(self) -> dict[str, str | None]:
        """The overlay's files: path -> text (None: deleted)."""
        return dict(self._files)

    @property
    def label(self) -> str:
        return f"{self.base.label} (edits applied by the editor)"

    @property
    def root(self) -> Path | None:
        return self.base.root  # its configuration, AGENTS.md and map are the base's

    def readonly_reason(self) -> str | None:
        return None

    def facts(self) -> dict[str, str]:
        return {**self.base.facts(), **self._own_facts()}

    async def read_facts(self) -> dict[str, str]:
        return {**await self.base.read_facts(), **self._own_facts()}

    @staticmethod
    def _own_facts() -> dict[str, str]:
        return {"edits": "sent to the editor, which applies them; the files on disk stay as they are"}

    def normalize(self, path: str) -> str:
        return self.base.normalize(path)

    # -- reading --------------------------------------------------------------------------
    async def read_text(self, path: str) -> str:
        rel = self.normalize(path)
        if rel in self._files:
            text = self._files[rel]
            if text is None:
                raise WorkspaceError(f"{rel} does not exist (deleted)")
            return text
        return await self.base.read_text(rel)

    async def exists(self, path: str) -> bool:
        rel = self.normalize(path)
        if rel in self._files:
            return self._files[rel] is not None
        return await self.base.exists(rel) or any(p.startswith(rel + "/") for p in self._live())

    async def is_dir(self, path: str) -> bool:
        rel = self.normalize(path)
        if rel in self._files:
            return False
        if not rel or any(p.startswith(rel + "/") for p in self._live()):
            return True
        return await self.base.is_dir(rel)

    def _live(self) -> list[str]:
        return [p for p, text in self._files.items() if text is not None]

    async def list_dir(self, path: str = "") -> list[DirEntry]:
        rel = self.normalize(path)
        try:
            found = {e.name: e for e in await self.base.list_dir(rel)}
        except WorkspaceError:
            if not await self.is_dir(rel):
                raise
            found = {}
        prefix = rel + "/" if rel else ""
        for name, text in self._files.items():
            if not name.startswith(prefix):
                continue
            head, _, rest = name[len(prefix):].partition("/")
            if rest:
                found.setdefault(head, DirEntry(head, True))
            elif text is None:
                found.pop(head, None)
            else:
                found[head] = DirEntry(head, False, len(text.encode("utf-8", "surrogatepass")))
        return sorted(found.values(), key=lambda e: (not e.is_dir, e.name.lower()))

    async def list_files(self, path: str = "") -> list[str]:
        rel = self.normalize(path)
        if rel in self._files:
            return [rel] if self._files[rel] is not None else []
        try:
            files = set(await self.base.list_files(rel))
        except WorkspaceError:
            files = set()
        prefix = rel + "/" if rel else ""
        for name, text in self._files.items():
            if name.startswith(prefix):
                (files.add if text is not None else files.discard)(name)
        return sorted(files)

    async def search(self, pattern: re.Pattern[str], path: str = "", max_results: int = 100,
                     progress: ProgressFn | None = None) -> SearchResult:
        """The base's search for the files the overlay leaves alone, then the overlay's files."""
        result = await self.base.search(pattern, path, max_results, progress)
        result.hits = [h for h in result.hits if h.path not in self._files]
        result.truncated = False
        for rel in await self.list_files(path):
            if rel in self._files:
                result.files_searched += 1
                if collect_hits(result, rel, self._files[rel] or "", pattern, max_results):
                    break
        return result

    # -- writing --------------------------------------------------------------------------
    async def apply(self, changes: list[FileChange]) -> None:
        """All or nothing: every base is checked before any file of the overlay changes."""
        for change in changes:
            refuse_git_path(change.path)  # the editor would write it to disk
        for change in changes:
            current = await self.read_text(change.path) if await self.exists(change.path) else None
            if current != change.old:
                raise ConflictError(f"{change.path} changed while the edit was prepared; read it again")
        for change in changes:
            rel = self.normalize(change.path)
            self._files[rel] = change.new
            if change.new is None:
                self.forget_read(rel)
            else:
                self.note_read(rel, change.new)

    async def close(self) -> None:
        await self.base.close()
