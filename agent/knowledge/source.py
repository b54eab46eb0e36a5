"""What the map reads from each kind of workspace: the file list with content hashes, and texts.

- a local folder (and a `--clone` worktree): .gitignore-aware listing; a file whose size and
  modification time are unchanged keeps its stored hash, others are read and hashed (git's blob
  sha), so a warm refresh reads nothing;
- GitHub without a clone: the recursive tree already carries every blob's sha, so nothing is
  fetched to know a file is unchanged; a blob is fetched only when its text is needed;
- an OCT room: the room's documents, hashed from their text.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from agent.knowledge.languages import language_of
from agent.knowledge.store import FileRecord, git_blob_sha, repo_key
from agent.workspaces import textio
from agent.workspaces.base import Workspace, WorkspaceError

MAX_TEXT_BYTES = 1024 * 1024


@dataclass
class Listing:
    records: dict[str, FileRecord]
    texts: dict[str, str] = field(default_factory=dict)  # texts read while hashing (local folders)


class MapSource:
    """The map's view of one workspace."""

    remote_reads = False  # each read costs an API request (GitHub)
    cheap_listing = False  # an unchanged map is confirmed without reading files (not so in a room)

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    @property
    def key(self) -> str:
        return repo_key(self.workspace.label)

    async def listing(self, known: dict[str, FileRecord]) -> Listing:
        records: dict[str, FileRecord] = {}
        texts: dict[str, str] = {}
        for path in await self.workspace.list_files(""):
            try:
                text = await self.workspace.read_text(path)
            except WorkspaceError:
                continue
            data = text.encode("utf-8", "surrogatepass")
            records[path] = FileRecord(path, git_blob_sha(data), len(data), 0, language_of(path))
            texts[path] = text
        return Listing(records, texts)

    async def read(self, path: str) -> str:
        return await self.workspace.read_text(path)


class LocalSource(MapSource):
    cheap_listing = True
    @property
    def key(self) -> str:
        remote = getattr(self.workspace, "pointer", None)  # a --clone worktree: the repository's map
        if remote is not None:
            return repo_key(f"github:{remote.repository}")
        return repo_key(f"local:{self.workspace.root}")

    async def listing(self, known: dict[str, FileRecord]) -> Listing:
        paths = await self.workspace.list_files("")
        return await asyncio.to_thread(self._scan, paths, known)

    def _scan(self, paths: list[str], known: dict[str, FileRecord]) -> Listing:
        root = self.workspace.root
        assert root is not None
        listing = Listing({})
        for path in paths:
            try:
                stat = os.stat(root / path)
            except OSError:
                continue
            old = known.get(path)
            if old is not None and old.size == stat.st_size and old.mtime_ns == stat.st_mtime_ns:
                listing.records[path] = old
                continue
            record = FileRecord(path, "", stat.st_size, stat.st_mtime_ns, language_of(path))
            if stat.st_size > MAX_TEXT_BYTES:
                record.sha, record.error = f"size:{stat.st_size}:{stat.st_mtime_ns}", "over 1 MB: not read"
            else:
                try:
                    data = (root / path).read_bytes()
                except OSError:  # vanished or unreadable since the listing
                    continue
                record.sha = git_blob_sha(data)
                text = _decode(data)
                if text is None:
                    record.error = "binary"
                else:
                    listing.texts[path] = text
            listing.records[path] = record
        return listing


class GitHubSource(MapSource):
    remote_reads = True
    cheap_listing = True

    @property
    def key(self) -> str:
        return repo_key(f"github:{self.workspace.remote.full_name}")  # type: ignore[attr-defined]

    async def listing(self, known: dict[str, FileRecord]) -> Listing:
        from agent.github.tree import SUBMODULE, SYMLINK

        remote: Any = self.workspace.remote  # type: ignore[attr-defined]
        listing = Listing({})
        for path in remote.file_paths():
            entry = remote.overlay.get(path)
            item = remote.index.get(path)
            if entry is not None and entry.text is not None:
                data = entry.text.encode("utf-8", "surrogatepass")
                sha, size = git_blob_sha(data), len(data)
            elif item is not None and item.mode not in (SUBMODULE, SYMLINK):
                sha, size = item.sha, item.size
            else:
                continue
            old = known.get(path)
            record = old if old is not None and old.sha == sha else FileRecord(path, sha, size, 0, language_of(path))
            if size > MAX_TEXT_BYTES and record is not old:
                record.error = "over 1 MB: not read"
            listing.records[path] = record
        return listing


def source_for(workspace: Workspace) -> MapSource:
    if workspace.kind == "github":
        return GitHubSource(workspace)
    if workspace.root is not None:
        return LocalSource(workspace)
    return MapSource(workspace)


def _decode(data: bytes) -> str | None:
    try:
        return textio.decode(data)[0]
    except textio.BinaryFileError:
        return None
