"""A folder that an editor has open: file text comes from (and goes to) the editor's buffers.

An editor driving the agent (over ACP, say) may hold unsaved changes; the agent must read and
edit what the user sees, not the stale copy on disk. The front end hands this workspace two
async callables taking absolute paths, `read(path) -> text` and `write(path, text)`, that go
through the editor; without them it behaves as the folder on disk. Everything else is the local
folder's: confinement to the root, `.git` refused, listing and search (from the disk: an editor
offers no listing), shell commands and checkpoints in the folder. The core never learns which
editor or protocol is behind the callables.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from agent.diffing import FileChange
from agent.workspaces.base import ConflictError, WorkspaceError
from agent.workspaces.local import LocalWorkspace

ReadFn = Callable[[str], Awaitable[str]]
WriteFn = Callable[[str, str], Awaitable[None]]
AppliedFn = Callable[[list[FileChange]], None]


class EditorWorkspace(LocalWorkspace):
    kind = "editor"

    def __init__(self, root: str | Path, read: ReadFn | None = None, write: WriteFn | None = None,
                 on_applied: AppliedFn | None = None) -> None:
        super().__init__(root)
        self._editor_read = read
        self._editor_write = write
        # Told every set of changes once written, with their old and new text (the front end
        # shows them as diffs; the events carry only unified diffs).
        self.on_applied = on_applied

    def view(self) -> EditorWorkspace:
        """Another view of the folder through the same editor (a subagent's), its reads its own."""
        return EditorWorkspace(self.root, self._editor_read, self._editor_write, self.on_applied)

    def facts(self) -> dict[str, str]:
        facts = super().facts()
        if self._editor_read is not None:
            facts["open files"] = "read from the editor's buffers, unsaved changes included"
        return facts

    def _absolute(self, rel: str) -> str:
        return str(self.root / rel)

    async def read_text(self, path: str) -> str:
        # The disk read checks what the editor cannot: inside the root, a regular text file, not huge.
        text = await super().read_text(path)
        if self._editor_read is None:
            return text
        rel = self.normalize(path)
        try:
            fresh = await self._editor_read(self._absolute(rel))
        except (OSError, WorkspaceError) as exc:
            raise WorkspaceError(f"{rel} cannot be read from the editor: {exc}") from None
        return fresh.replace("\r\n", "\n")

    async def apply(self, changes: list[FileChange]) -> None:
        if self._editor_write is None or any(change.new is None for change in changes):
            # Deletions go to the disk: the editor protocol has no way to delete a file.
            await super().apply(changes)
        else:
            await self._apply_through_editor(changes)
        if self.on_applied is not None:
            self.on_applied(changes)

    async def _apply_through_editor(self, changes: list[FileChange]) -> None:
        """Each file through the editor, after checking its base; a failure puts back what was written."""
        originals: list[tuple[str, str]] = []  # (absolute path, the text it had) already written
        for change in changes:
            self._writable(change.path)
        for change in changes:
            before = await self._current(change.path)
            if before is not None and (change.old is None or before.replace("\r\n", "\n") != change.old):
                await self._put_back(originals)
                raise ConflictError(f"{change.path} changed in the editor while the edit was prepared; read it again")
            target = self._absolute(self.normalize(change.path))
            new = change.new or ""
            if before is not None and "\r\n" in before:
                new = new.replace("\n", "\r\n")
            try:
                assert self._editor_write is not None
                await self._editor_write(target, new)
            except (OSError, WorkspaceError) as exc:
                await self._put_back(originals)
                raise WorkspaceError(f"could not write {change.path} through the editor: {exc}; "
                                     "nothing was changed") from None
            if before is not None:  # a file the editor created cannot be taken back through it
                originals.append((target, before))
        for change in changes:
            self.note_read(change.path, change.new or "")

    async def _current(self, path: str) -> str | None:
        """The editor's text of an existing file (None: it does not exist)."""
        if not await self.exists(path):
            return None
        assert self._editor_read is not None
        try:
            return await self._editor_read(self._absolute(self.normalize(path)))
        except (OSError, WorkspaceError) as exc:
            raise WorkspaceError(f"{path} cannot be read from the editor: {exc}; nothing was changed") from None

    async def _put_back(self, originals: list[tuple[str, str]]) -> None:
        assert self._editor_write is not None
        for target, text in reversed(originals):
            try:
                await self._editor_write(target, text)
            except (OSError, WorkspaceError):
                continue  # the editor refuses now too; the error already raised says what failed
