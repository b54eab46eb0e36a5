"""GitHub workspaces: the API workspace (no clone, an overlay of edits) and the `--clone` one.

Reads come from one recursive tree and blobs fetched on demand; `search` fetches what it needs
(with progress, up to a reported cap). Edits go into the overlay, never to GitHub, until the
user publishes them as one commit on the work branch. There is no shell and no checkpoint
folder; the model is told why. Every overlay change is recorded in the session file (one state
key per path), so `--resume` after a crash continues with the unpublished edits intact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agent.diffing import FileChange
from agent.github.clone import ClonePublisher
from agent.github.issues import PullRequestInfo, open_pull_request
from agent.github.publish import ApiPublisher, PublishResult
from agent.github.remote import RemoteRepo, RepoStatus
from agent.github.state import ClonePointer, GitHubState, OverlayFile, RepoPointer
from agent.github.tree import children
from agent.workspaces.base import (
    ConflictError,
    DirEntry,
    ProgressFn,
    SearchResult,
    Workspace,
    WorkspaceError,
    collect_hits,
)
from agent.workspaces.local import LocalWorkspace

StateRecorder = Callable[[str, Any], None]  # AgentSession.record_state
STATE_KEY = "github"
FILE_KEY = "github.file:"
CLONE_KEY = "github.clone"
SEARCH_FILE_CAP = 500  # each uncached file costs one API request (5,000 an hour with a token)
SEARCH_BATCH = 64
MAX_SEARCH_BYTES = 2 * 1024 * 1024
NO_SHELL = (
    "this workspace is a GitHub repository read through the API without a clone, so there is no "
    "shell; use the file and search tools (the user can restart coder-tui with --clone to run commands)"
)


class GitHubWorkspace(Workspace):
    kind = "github"
    can_exec = False
    can_checkpoint = False
    exec_unavailable_reason = NO_SHELL

    def __init__(self, remote: RemoteRepo) -> None:
        super().__init__()
        self.remote = remote
        self.publisher = ApiPublisher(remote)
        self._record: StateRecorder | None = None
        self.left: list[str] = []  # repositories this session switched away from (agent/github/switch.py)

    @property
    def github(self) -> GitHubWorkspace:
        """What the GitHub tools use: issues through `remote`, pull requests through `publisher`."""
        return self

    @property
    def label(self) -> str:
        return f"github:{self.remote.full_name}"

    def facts(self) -> dict[str, str]:
        remote = self.remote
        staged = remote.staged()
        return {
            "workspace": f"{remote.full_name}@{remote.ref} on GitHub (read through the API, no clone)",
            "kind": "GitHub repository",
            "base commit": remote.base_commit[:12],
            "work branch": remote.work_branch,
            "unpublished changes": f"{len(staged)} file(s)" if staged else "none",
            "publishing": f"edits stay unpublished until create_pull_request (or the user's /pr) commits them "
                          f"as one commit on {remote.work_branch} and opens a pull request into {remote.pr_base}",
        }

    # -- session state --------------------------------------------------------------------------
    def attach(self, record: StateRecorder, resumed: bool = False) -> None:
        """Record into the session from now on; a new session first records everything."""
        self._record = record
        if not resumed:
            self._save_pointer()
            for path, entry in self.remote.overlay.items():
                record(FILE_KEY + path, entry.to_record())

    def rebind(self, remote: RemoteRepo) -> None:
        """Work on another (connected, started) repository from now on; recorded for --resume."""
        from agent.github.switch import SWITCHED_KEY

        old = self.remote.full_name.lower()
        self.left = [name for name in self.left if name != old] + [old]
        self.remote, self.publisher = remote, ApiPublisher(remote)
        self._seen.clear()  # what the model read was in the other repository
        if self._record is not None:
            self._record(SWITCHED_KEY, list(self.left))
        self._save_pointer()

    def _save_pointer(self) -> None:
        if self._record is not None:
            self._record(STATE_KEY, self.remote.pointer().model_dump())

    def _save_file(self, path: str) -> None:
        if self._record is not None:
            entry = self.remote.overlay.get(path)
            self._record(FILE_KEY + path, entry.to_record() if entry is not None else None)

    @staticmethod
    def saved_state(state: dict[str, Any]) -> GitHubState | None:
        """The repository pointer and overlay recorded in a session's state, if any."""
        pointer = state.get(STATE_KEY)
        if not isinstance(pointer, dict):
            return None
        overlay = {key[len(FILE_KEY):]: OverlayFile.from_record(value) for key, value in state.items()
                   if key.startswith(FILE_KEY) and isinstance(value, dict)}
        return GitHubState(**RepoPointer.model_validate(pointer).model_dump(), overlay=overlay)

    # -- reading --------------------------------------------------------------------------------
    async def read_text(self, path: str) -> str:
        return await self.remote.read_text(self.normalize(path))

    async def exists(self, path: str) -> bool:
        return self.remote.exists(self.normalize(path))

    async def is_dir(self, path: str) -> bool:
        return self.remote.is_dir(self.normalize(path))

    async def list_dir(self, path: str = "") -> list[DirEntry]:
        rel = self.normalize(path)
        if not self.remote.is_dir(rel):
            raise WorkspaceError(f"{rel or path} is not a folder")
        paths = self.remote.file_paths()
        prefix = f"{rel}/" if rel else ""
        mine = [p for p in paths if p.startswith(prefix)]
        sizes = {p: self.remote.size(p) for p in mine if "/" not in p[len(prefix):]}
        dirs = {d for d in self.remote.dir_paths() if d.startswith(prefix)}
        return children(mine, dirs, sizes, rel)

    async def list_files(self, path: str = "") -> list[str]:
        rel = self.normalize(path)
        paths = self.remote.file_paths()
        if rel in paths:
            return [rel]
        if not self.remote.is_dir(rel):
            raise WorkspaceError(f"{rel or path} does not exist")
        prefix = f"{rel}/" if rel else ""
        return [p for p in paths if p.startswith(prefix)]

    async def search(self, pattern: re.Pattern[str], path: str = "", max_results: int = 100,
                     progress: ProgressFn | None = None) -> SearchResult:
        """Fetch files in batches and search them, stopping at max_results or the file cap."""
        files = await self.list_files(path)
        big = [p for p in files if self.remote.size(p) > MAX_SEARCH_BYTES]
        candidates = [p for p in files if self.remote.size(p) <= MAX_SEARCH_BYTES]
        capped = candidates[:SEARCH_FILE_CAP]
        uncached = sum(1 for p in capped if not self.remote.cached(p))
        result = SearchResult()
        for start in range(0, len(capped), SEARCH_BATCH):
            batch = capped[start:start + SEARCH_BATCH]
            await self.remote.prefetch(batch)
            if progress:
                progress("search", min(start + SEARCH_BATCH, len(capped)), len(capped))
            if await self._search_batch(result, batch, pattern, max_results):
                break
        if uncached:
            result.notes.append(f"fetched {uncached} file(s) from GitHub for this search (one API request each; "
                                "they stay cached for later searches)")
        if len(candidates) > len(capped):
            result.notes.append(f"searched the first {len(capped)} of {len(candidates)} files (files are fetched "
                                "through the GitHub API; give a narrower path to search the rest)")
        if big:
            result.notes.append(f"{len(big)} file(s) over 2 MB were not searched")
        return result

    async def _search_batch(self, result: SearchResult, batch: list[str], pattern: re.Pattern[str],
                            max_results: int) -> bool:
        for rel in batch:
            try:
                text = await self.remote.read_text(rel)
            except WorkspaceError:
                continue
            result.files_searched += 1
            if collect_hits(result, rel, text, pattern, max_results):
                return True
        return False

    # -- writing --------------------------------------------------------------------------------
    async def apply(self, changes: list[FileChange]) -> None:
        """Check every base against the overlay view, then stage all (nothing on any conflict)."""
        for change in changes:
            if self.remote.is_dir(change.path):
                raise WorkspaceError(f"{change.path} is a folder")
            current = await self.remote.read_text(change.path) if self.remote.exists(change.path) else None
            if current != change.old:
                what = "was deleted" if current is None else "changed"
                raise ConflictError(f"{change.path} {what} while the edit was prepared; read it again")
        for change in changes:
            await self.remote.stage(change.path, change.new)
            self._save_file(change.path)
            if change.new is None:
                self.forget_read(change.path)
            else:
                self.note_read(change.path, change.new)

    # -- publishing -----------------------------------------------------------------------------
    async def publish(self, title: str | None = None) -> PublishResult:
        staged = [s.path for s in self.remote.staged()]
        result = await self.publisher.publish(title)
        self._after_publish(staged)
        return result

    async def open_pull_request(self, title: str, body: str = "", draft: bool = False) -> PullRequestInfo:
        staged = [s.path for s in self.remote.staged()]
        info = await open_pull_request(self.remote, self.publisher, title, body, draft)
        self._after_publish(staged if info.published else [])
        return info

    def _after_publish(self, published: list[str]) -> None:
        for path in published:
            self._save_file(path)
        self._save_pointer()

    def status(self) -> RepoStatus:
        return self.remote.status()

    async def close(self) -> None:
        self.remote.client.close()


class ClonedGitHubWorkspace(LocalWorkspace):
    """`--clone`: a worktree of the cached clone, with shell tools and checkpoints like any folder.

    Issues and pull requests still go through the API (`remote`); publishing commits and pushes.
    """

    kind = "github-clone"

    def __init__(self, pointer: ClonePointer, remote: RemoteRepo, publisher: ClonePublisher) -> None:
        super().__init__(pointer.worktree)
        self.pointer = pointer
        self.remote = remote
        self.publisher = publisher
        self._record: StateRecorder | None = None

    @property
    def github(self) -> ClonedGitHubWorkspace:
        return self

    @property
    def label(self) -> str:
        return f"github:{self.pointer.repository} (clone)"

    def facts(self) -> dict[str, str]:
        facts = super().facts()
        facts.update({
            "workspace": f"{self.root} (a clone of {self.pointer.repository}@{self.pointer.ref})",
            "kind": "GitHub repository, cloned",
            "work branch": self.publisher.branch,
            "publishing": f"create_pull_request (or the user's /pr) commits every change, pushes "
                          f"{self.publisher.branch} and opens a pull request into {self.remote.pr_base}",
        })
        return facts

    def attach(self, record: StateRecorder, resumed: bool = False) -> None:
        self._record = record
        if not resumed:
            record(CLONE_KEY, self.pointer.model_dump())

    @staticmethod
    def saved_pointer(state: dict[str, Any]) -> ClonePointer | None:
        value = state.get(CLONE_KEY)
        return ClonePointer.model_validate(value) if isinstance(value, dict) else None

    async def publish(self, title: str | None = None) -> PublishResult:
        return await self.publisher.publish(title)

    async def open_pull_request(self, title: str, body: str = "", draft: bool = False) -> PullRequestInfo:
        info = await open_pull_request(self.remote, self.publisher, title, body, draft)
        self.pointer = self.pointer.model_copy(update={"pull_request": info.number})
        if self._record is not None:
            self._record(CLONE_KEY, self.pointer.model_dump())
        return info

    def status(self) -> RepoStatus:
        return RepoStatus(self.pointer.repository, self.pointer.ref, self.publisher.branch,
                          self.publisher.changed_files(), self.remote.client.rate(), self.pointer.pull_request)

    async def close(self) -> None:
        self.remote.client.close()
