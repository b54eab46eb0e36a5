"""A file the agent reads gets its map summary refreshed when it is stale (seed 001).

`read_file` tells the session's `SummaryFreshener` which path it read; the read itself never waits.
In the background, one file at a time, the freshener compares the file's content hash with the
hashes its stored summaries were written for: when the map already has a summary of that path and
none for the content now, the small model summarises it again (`MapBuilder.summarise_one`) and the
store keeps the new one. Nothing happens for a file the map never summarised (the user never asked
for it: `coder-tui map`, `/explore` decide that, with a cost shown first), for a workspace without
a map, or when `map_tokens = 0` (the map is switched off). A failure is reported once per session,
as a warning naming `coder-tui map`; the read it followed has long returned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agent.events import WarningEvent
from agent.workspaces.base import Workspace

Emit = Callable[[Any], None]


class SummaryFreshener:
    def __init__(self, workspace: Workspace, llm: Callable[[], Any], emit: Emit,
                 enabled: Callable[[], bool]) -> None:
        self.workspace = workspace
        self._llm_factory = llm
        self._llm: Any = None
        self.emit = emit
        self.enabled = enabled
        self.queue: list[str] = []
        self.task: asyncio.Task[None] | None = None
        self.refreshed: list[str] = []  # paths summarised again (what tests and status read)
        self._warned = False

    def read(self, path: str) -> None:
        """The agent read `path`: check (and refresh) its summary later; returns at once."""
        if not self.enabled() or path in self.queue:
            return
        self.queue.append(path)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._work(), name="map-freshen")

    async def idle(self) -> None:
        """Wait until every queued path was handled (tests, closing)."""
        while self.task is not None and not self.task.done():
            await asyncio.shield(self.task)

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _work(self) -> None:
        while self.queue:
            path = self.queue.pop(0)
            try:
                if await self._freshen(path):
                    self.refreshed.append(path)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: one warning, the session goes on
                if not self._warned:
                    self._warned = True
                    self.emit(WarningEvent(message=f"map: could not refresh the summary of {path} ({exc}); "
                                                   "`coder-tui map` refreshes the map"))

    async def _freshen(self, path: str) -> bool:
        from agent.knowledge.source import source_for
        from agent.knowledge.store import knowledge_dir

        source = source_for(self.workspace)
        if not (knowledge_dir(source.key) / "map.sqlite3").exists():
            return False  # no map for this workspace: nothing the user asked to keep current
        text = await self.workspace.read_text(path)
        return await asyncio.to_thread(self._stale, source, path, text) and await self._summarise(source, path)

    def _stale(self, source: Any, path: str, text: str) -> bool:
        """Record the file's current hash when its summary is of another content (True: summarise)."""
        from agent.knowledge.languages import language_of
        from agent.knowledge.store import FileRecord, MapStore

        sha, size = self._hash(path, text)
        store = MapStore(source.key)
        try:
            known = store.summary_shas(path)
            if not known or sha in known:
                return False
            record = store.files().get(path)
            if record is None or record.sha != sha:  # the map's listing has not seen this content yet
                store.put_files([FileRecord(path, sha, size, 0, language_of(path))])
            return True
        finally:
            store.close()

    def _hash(self, path: str, text: str) -> tuple[str, int]:
        """(content hash, size) as the map's listing computes them (agent/knowledge/source.py)."""
        from agent.knowledge.store import git_blob_sha

        remote: Any = getattr(self.workspace, "remote", None)
        if self.workspace.kind == "github" and remote is not None and path not in remote.overlay:
            item = remote.index.get(path)
            if item is not None:
                return item.sha, item.size  # the tree's own hash: the blob's exact bytes
        data = text.encode("utf-8", "surrogatepass")
        root = self.workspace.root
        if root is not None and self.workspace.kind != "github":
            try:
                data = (root / path).read_bytes()
            except OSError:
                pass
        return git_blob_sha(data), len(data)

    async def _summarise(self, source: Any, path: str) -> bool:
        from agent.knowledge.builder import MapBuilder

        if self._llm is None:
            self._llm = self._llm_factory()
        builder = MapBuilder(self.workspace, self._llm, source=source)
        try:
            await builder.summarise_one(path)
        finally:
            builder.close()
        return True

