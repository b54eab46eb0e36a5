"""A live OCT room as a workspace: files are protocol paths (`<folder>/<path>`, e.g. `ws/main.py`).

Documents open in the host's editor are shared Y.Texts: read from the Yjs document and edited in
place, through the sticky-position snapshots of `agent.oct.anchors` (what the model was shown is
what an edit is computed from, and the edit lands where the model meant it while people type).
Other files are read and written through the host's `fileSystem/*` requests. There is no shell
and no checkpoint: the files live in the host's editor.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from agent.diffing import FileChange
from agent.oct.anchors import PreparedEdit, Snapshot, prepare_edit, take_snapshot
from agent.oct.client import RoomClient
from agent.oct.errors import OctError
from agent.oct.messages import FILE_TYPE_DIRECTORY
from agent.workspaces.base import (
    ConflictError,
    DirEntry,
    ProgressFn,
    SearchResult,
    Workspace,
    WorkspaceError,
    collect_hits,
)

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".tox"})
MAX_FILES = 5000
MAX_REMOTE_BYTES = 5 * 1024 * 1024
DELIVERY_MARGIN = 10.0  # seconds beyond the connection's grace period to wait for an edit to go out


class RoomWorkspace(Workspace):
    kind = "room"
    can_exec = False
    can_checkpoint = False
    exec_unavailable_reason = "the workspace is a live OCT room; its files live in the host's editor"

    def __init__(self, client: RoomClient) -> None:
        super().__init__()
        self.client = client
        self._snapshots: dict[str, Snapshot] = {}  # what the model saw of each shared text
        self._crlf: dict[str, bool] = {}  # host files read with CRLF line ends

    @property
    def label(self) -> str:
        return f"room {self.client.status.room_id}"

    def readonly_reason(self) -> str | None:
        if self.client.status.readonly:
            return "the host made this room read-only; ask them to allow edits"
        if self.client.closed.is_set():
            return "the room connection is closed"
        return None

    def facts(self) -> dict[str, str]:
        status = self.client.status
        docs = self.client.docs
        facts = {
            "workspace": f"live Open Collaboration Tools room {status.room_id} on {status.server}",
            "kind": "OCT room (paths are <folder>/<path>, e.g. "
                    f"{(status.folders or ['ws'])[0]}/main.py; people edit these files live)",
            "workspace folders": ", ".join(status.folders) or "(none shared)",
            "host": status.host.name if status.host else "unknown",
            "permissions": "read-only" if status.readonly else "read and write",
        }
        if status.followed:
            facts["document the host is looking at"] = status.followed
        if docs is not None:
            facts["documents open in the editor"] = ", ".join(docs.paths()) or "none"
        return facts

    # -- reading --------------------------------------------------------------------------
    def has_shared(self, path: str) -> bool:
        """Whether path is a document open (shared) in the host's editor."""
        return self._shared(self.normalize(path))

    def _shared(self, path: str) -> bool:
        docs = self.client.docs
        return docs is not None and docs.has_text(path) and len(docs.text(path)) > 0

    def _view(self, path: str) -> str:
        """The shared text as the model is shown it: "\n" line ends."""
        assert self.client.docs is not None
        return str(self.client.docs.text(path)).replace("\r\n", "\n")

    def show(self, path: str) -> str:
        """The shared text, remembered as what the model saw (for documents put in a prompt)."""
        text = self._view(path)
        self.note_read(path, text)
        return text

    async def read_text(self, path: str) -> str:
        path = self.normalize(path)
        if self._shared(path):
            return self._view(path)
        data = await self._fs("read", path, self.client.read_file)
        if len(data) > MAX_REMOTE_BYTES:
            raise WorkspaceError(f"{path} is {len(data) // 1024 // 1024} MB; files over 5 MB are not read")
        if b"\x00" in data[:8192]:
            raise WorkspaceError(f"{path} is a binary file; the text tools do not read or edit it")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise WorkspaceError(f"{path} is not UTF-8 text") from None
        self._crlf[path] = "\r\n" in text
        return text.replace("\r\n", "\n")

    async def _fs(self, what: str, path: str, call: Any, *args: Any) -> Any:
        try:
            return await call(path, *args)
        except OctError as exc:
            raise WorkspaceError(f"cannot {what} {path} through the host: {exc}") from None

    async def exists(self, path: str) -> bool:
        path = self.normalize(path)
        if self._shared(path):
            return True
        try:
            await self.client.stat(path)
        except OctError:
            return False
        return True

    async def is_dir(self, path: str) -> bool:
        path = self.normalize(path)
        if path == "":
            return True
        if self._shared(path):
            return False
        try:
            return (await self.client.stat(path)).type == FILE_TYPE_DIRECTORY
        except OctError:
            return False

    async def list_dir(self, path: str = "") -> list[DirEntry]:
        path = self.normalize(path)
        if path == "":
            return [DirEntry(folder, True) for folder in self.client.status.folders]
        entries = await self._fs("list", path, self.client.read_dir)
        found = [DirEntry(name, kind == FILE_TYPE_DIRECTORY) for name, kind in entries.items()]
        return sorted(found, key=lambda e: (not e.is_dir, e.name.lower()))

    async def list_files(self, path: str = "") -> list[str]:
        path = self.normalize(path)
        if path and not await self.is_dir(path):
            return [path] if await self.exists(path) else []
        files: list[str] = []
        pending = [path] if path else list(self.client.status.folders)
        while pending and len(files) < MAX_FILES:
            folder = pending.pop(0)
            for entry in await self.list_dir(folder):
                child = f"{folder}/{entry.name}"
                if entry.is_dir:
                    if entry.name not in SKIP_DIRS:
                        pending.append(child)
                else:
                    files.append(child)
        return sorted(files[:MAX_FILES])

    async def search(self, pattern: re.Pattern[str], path: str = "", max_results: int = 100,
                     progress: ProgressFn | None = None) -> SearchResult:
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
        if len(files) >= MAX_FILES:
            result.notes.append(f"only the first {MAX_FILES} files of the room were searched")
        return result

    # -- edits ----------------------------------------------------------------------------
    def note_read(self, path: str, text: str) -> None:
        """Snapshot a shared text as the model was shown it (called right after read_text)."""
        super().note_read(path, text)
        if not self._shared(path):
            return
        assert self.client.docs is not None
        snapshot = take_snapshot(path, self.client.docs.positions(path))
        if snapshot.text == text:
            self._snapshots[path] = snapshot
        else:  # the text moved on in between: the next edit computes from a fresh view
            self._snapshots.pop(path, None)

    async def load_for_edit(self, path: str) -> str | None:
        if self._shared(path):
            if path not in self._snapshots:
                self.show(path)
            return self._snapshots[path].text
        return await super().load_for_edit(path)

    async def apply(self, changes: list[FileChange]) -> None:
        if why := self.readonly_reason():
            raise WorkspaceError(f"edits are refused: {why}")
        shared = [c for c in changes if c.path in self._snapshots and self._shared(c.path)]
        remote = [c for c in changes if c not in shared]
        for change in shared:
            self._prepare(change)  # refuse before touching anything
        for change in remote:
            await self._write_remote(change)
        # Offsets are found again after those awaits, and committed without yielding in between.
        prepared = [self._prepare(change) for change in shared]
        for change, edit in zip(shared, prepared):
            if edit is not None:
                self._snapshots[change.path] = edit.commit()
            super().note_read(change.path, change.new or "")
        if shared:
            await self._delivered([change.path for change in shared])

    async def _delivered(self, paths: list[str]) -> None:
        """An edit is done when it went out to the room, not when our copy changed: while the
        connection is down (a server restart) this waits for it to come back."""
        docs = self.client.docs
        assert docs is not None
        version = docs.version
        if docs.delivered >= version:
            return
        sent = asyncio.ensure_future(docs.until_delivered(version))
        closed = asyncio.ensure_future(self.client.closed.wait())
        try:
            await asyncio.wait({sent, closed}, timeout=self.client.options.grace + DELIVERY_MARGIN,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sent, closed):
                task.cancel()
        if docs.delivered >= version:
            return
        names = ", ".join(paths)
        if self.client.closed.is_set():
            raise WorkspaceError(
                f"the edit of {names} changed only coder-tui's copy: the room connection ended before it "
                f"reached the others ({self.client.status.close_reason}), so nobody else sees it")
        raise WorkspaceError(
            f"the edit of {names} has not reached the room yet: the connection is down. It goes out when "
            "the connection comes back; read the file again then, before editing it further")

    def _prepare(self, change: FileChange) -> PreparedEdit | None:
        snapshot = self._snapshots[change.path]
        if change.old != snapshot.text:
            raise ConflictError(f"{change.path} changed since the edit was prepared; read it again")
        if change.new is None:
            raise WorkspaceError(f"{change.path} is open in the host's editor; it cannot be deleted here")
        return prepare_edit(snapshot, change.new)

    async def _write_remote(self, change: FileChange) -> None:
        current = await self.read_text(change.path) if await self.exists(change.path) else None
        if current != change.old:
            raise ConflictError(f"{change.path} changed in the room while the edit was prepared; re-read it")
        if change.new is None:
            await self._fs("delete", change.path, self.client.delete)
            self.forget_read(change.path)
        else:
            text = change.new.replace("\n", "\r\n") if self._crlf.get(change.path) else change.new
            await self._fs("write", change.path, self.client.write_file, text.encode("utf-8"))
            super().note_read(change.path, change.new)

    async def close(self) -> None:
        self._snapshots.clear()
