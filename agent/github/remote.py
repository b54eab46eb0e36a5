"""One GitHub repository at one commit, plus an in-memory overlay of unpublished edits.

Opening costs five requests: the repository, the ref, its commit, one recursive tree, and a
check that the work branch name is free. Blobs are fetched when first read and cached by sha.
Edits never touch GitHub: they go into the overlay (text and encoding by path, or a deletion)
until `publish` makes one commit of them.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agent.github.client import TOKEN_HINT, GitHubClient, RateInfo
from agent.github.errors import BinaryFile, GitHubError, NotFound, RepoNotFound
from agent.github.spec import RepoSpec
from agent.github.state import GitHubState, OverlayFile, RepoPointer
from agent.github.tree import SUBMODULE, SYMLINK, BlobCache, TreeIndex, TreeItem, parent_dirs
from agent.workspaces import textio
from agent.workspaces.base import ProgressFn, WorkspaceError

if TYPE_CHECKING:
    from github.Repository import Repository

FETCH_CONCURRENCY = 8
MAX_READ_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class StagedFile:
    path: str
    status: Literal["added", "modified", "deleted"]


@dataclass(frozen=True)
class RepoStatus:
    """What a status pane shows about the repository."""

    repository: str
    ref: str
    work_branch: str
    staged: list[StagedFile]
    rate: RateInfo | None
    pull_request: int | None


class RemoteRepo:
    def __init__(self, client: GitHubClient, spec: RepoSpec) -> None:
        self.client = client
        self.spec = spec
        self.full_name = spec.full_name
        self.default_branch = ""
        self.ref = spec.ref or ""
        self.ref_is_branch = True
        self.can_push = False
        self.base_commit = ""
        self.base_tree = ""
        self.index = TreeIndex([])
        self.blobs = BlobCache()
        self.overlay: dict[str, OverlayFile] = {}
        self.work_branch = ""
        self.published_head: str | None = None
        self.pull_request: int | None = None
        self.notes: list[str] = []
        self._api: Repository | None = None
        self._live: tuple[list[str], set[str]] | None = None

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    async def open(cls, client: GitHubClient, spec: RepoSpec, task: str = "") -> RemoteRepo:
        """Connect, resolve the ref, load the tree, and pick a free work branch named after the task."""
        remote = cls(client, spec)
        await remote.connect()
        await remote.start(task)
        return remote

    @classmethod
    async def restore(cls, client: GitHubClient, state: GitHubState) -> RemoteRepo:
        """Reopen a saved session: same base commit, same work branch, overlay intact."""
        owner, name = state.repository.split("/")
        remote = cls(client, RepoSpec(owner, name, state.ref))
        await remote.connect()
        await remote.resume(state)
        return remote

    async def start(self, task: str = "") -> None:
        """After connect(): resolve the ref, load its tree, choose the work branch."""
        self.base_commit, self.ref_is_branch = await self._resolve_ref(self.ref)
        await self.load_tree(self.base_commit)
        self.work_branch = await self.free_branch(work_branch_name(task))

    async def resume(self, state: GitHubState) -> None:
        """After connect(): take up a saved state (the tree of its base commit and its overlay)."""
        self.ref, self.ref_is_branch = state.ref, state.ref_is_branch
        await self.load_tree(state.base_commit)
        self.work_branch = state.work_branch
        self.published_head = state.published_head
        self.pull_request = state.pull_request
        self.overlay = dict(state.overlay)
        self._live = None

    def pointer(self) -> RepoPointer:
        return RepoPointer(
            repository=self.full_name, api_url=self.client.settings.api_url, ref=self.ref,
            ref_is_branch=self.ref_is_branch, default_branch=self.default_branch,
            base_commit=self.base_commit, work_branch=self.work_branch,
            published_head=self.published_head, pull_request=self.pull_request,
        )

    def state(self) -> GitHubState:
        return GitHubState(**self.pointer().model_dump(), overlay=dict(self.overlay))

    @property
    def api(self) -> Repository:
        assert self._api is not None, "RemoteRepo used before connect()"
        return self._api

    async def connect(self) -> None:
        """Read the repository itself: its name, default branch and our permissions."""
        private = "" if self.client.has_token else f" (if it is private, a token is needed: {TOKEN_HINT})"
        missing = RepoNotFound(f"repository {self.full_name} not found on GitHub{private}")
        self._api = await self.client.repository(self.full_name, missing)
        raw: dict[str, Any] = self._api.raw_data
        self.full_name = str(raw.get("full_name") or self.full_name)
        self.default_branch = str(raw.get("default_branch") or "main")
        self.can_push = bool((raw.get("permissions") or {}).get("push"))
        self.ref = self.ref or self.default_branch

    async def _resolve_ref(self, ref: str) -> tuple[str, bool]:
        """(commit sha, is_branch) for a branch, tag or commit name."""
        head = await self.branch_head(ref)
        if head is not None:
            return head, True
        missing = NotFound(f"{ref!r} is not a branch, tag or commit of {self.full_name}")
        try:
            commit = await self.client.call(f"resolving {ref}", lambda: self.api.get_commit(ref), missing=missing)
        except GitHubError as exc:
            if "No commit found" in str(exc):
                raise missing from None
            raise
        return commit.sha, False

    async def load_tree(self, commit_sha: str) -> None:
        """One recursive tree fetch for the commit (more only when GitHub truncates it)."""
        commit = await self.client.call(f"reading commit {commit_sha[:7]}",
                                        lambda: self.api.get_git_commit(commit_sha))
        self.base_commit, self.base_tree = commit_sha, commit.tree.sha
        items, dirs = await self._fetch_tree(self.base_tree, "")
        self.index = TreeIndex(items, dirs)
        self._live = None

    async def _fetch_tree(self, sha: str, prefix: str) -> tuple[list[TreeItem], set[str]]:
        tree = await self.client.call("reading the file tree", lambda: self.api.get_git_tree(sha, recursive=True))
        if not tree.truncated:
            return _tree_items(tree.tree, prefix)
        # Too big for one answer: list this level, then each folder recursively.
        self.notes.append(f"the tree of {prefix or 'the repository'} was too large for one request")
        level = await self.client.call("reading the file tree", lambda: self.api.get_git_tree(sha))
        items, dirs = _tree_items([e for e in level.tree if e.type != "tree"], prefix)
        for entry in [e for e in level.tree if e.type == "tree"]:
            path = f"{prefix}{entry.path}"
            sub_items, sub_dirs = await self._fetch_tree(entry.sha, f"{path}/")
            items += sub_items
            dirs |= sub_dirs | {path}
        return items, dirs

    async def free_branch(self, name: str) -> str:
        """name, or name-2, name-3... whichever does not exist yet."""
        for candidate in [name] + [f"{name}-{n}" for n in range(2, 10)]:
            if await self.branch_head(candidate) is None:
                return candidate
        return f"{name}-{dt.datetime.now():%H%M%S}"

    async def branch_head(self, branch: str) -> str | None:
        try:
            ref = await self.client.call(f"reading branch {branch}", lambda: self.api.get_git_ref(f"heads/{branch}"))
        except NotFound:
            return None
        return ref.object.sha

    # -- reading (the tree seen through the overlay) ------------------------------------------------
    def _view(self) -> tuple[list[str], set[str]]:
        """(files, folders) of the commit seen through the overlay, cached until either changes."""
        if self._live is None:
            paths = {p for p, item in self.index.files.items() if item.mode != SUBMODULE}
            paths |= {p for p, entry in self.overlay.items() if not entry.deleted}
            paths -= {p for p, entry in self.overlay.items() if entry.deleted}
            dirs = {d for p in paths for d in parent_dirs(p)}
            dirs |= {p for p, i in self.index.files.items() if i.mode == SUBMODULE}
            self._live = (sorted(paths), dirs)
        return self._live

    def file_paths(self) -> list[str]:
        return self._view()[0]

    def dir_paths(self) -> set[str]:
        return self._view()[1]

    def exists(self, path: str) -> bool:
        if path in self.overlay:
            return not self.overlay[path].deleted
        return path in self.index.files or self.is_dir(path)

    def is_dir(self, path: str) -> bool:
        return path == "" or path in self._view()[1]

    def size(self, path: str) -> int:
        entry = self.overlay.get(path)
        if entry is not None:
            return len(textio.encode(entry.text or "", entry.format))
        item = self.index.get(path)
        return item.size if item else 0

    async def read_text(self, path: str) -> str:
        """The file's text with "\\n" line ends (WorkspaceError when missing, binary or special)."""
        entry = self.overlay.get(path)
        if entry is not None:
            if entry.text is None:
                raise WorkspaceError(f"{path} was deleted (not yet published)")
            return entry.text
        return (await self._committed(path, missing_ok=False))[0]  # type: ignore[index]

    async def committed(self, path: str) -> tuple[str, textio.TextFormat] | None:
        """path's text and format at the base commit, ignoring the overlay (None: not there)."""
        return await self._committed(path, missing_ok=True)

    async def _committed(self, path: str, missing_ok: bool) -> tuple[str, textio.TextFormat] | None:
        item = self.index.get(path)
        if item is None:
            if missing_ok:
                return None
            what = "a folder" if self.is_dir(path) else "not a file"
            raise WorkspaceError(f"{path} is {what} in {self.full_name}@{self.ref}")
        if item.mode == SUBMODULE:
            raise WorkspaceError(f"{path} is a submodule (commit {item.sha[:7]}); its files live in another repository")
        if item.size > MAX_READ_BYTES:
            raise WorkspaceError(f"{path} is {item.size // 1024 // 1024} MB; files over 20 MB are not read")
        data = await self.blob(item.sha)
        if item.mode == SYMLINK:
            raise WorkspaceError(f"{path} is a symbolic link to {data.decode(errors='replace')}; read the target")
        try:
            return textio.decode(data)
        except textio.BinaryFileError:
            raise BinaryFile(f"{path} is a binary file ({len(data)} bytes); the text tools do not read "
                             "or edit it") from None

    def cached(self, path: str) -> bool:
        """Whether reading path needs no request (overlay, or its blob is cached)."""
        item = self.index.get(path)
        return path in self.overlay or item is None or item.sha in self.blobs

    async def blob(self, sha: str) -> bytes:
        cached = self.blobs.get(sha)
        if cached is not None:
            return cached
        blob = await self.client.call(f"reading blob {sha[:7]}", lambda: self.api.get_git_blob(sha))
        data = base64.b64decode(blob.content) if blob.encoding == "base64" else blob.content.encode()
        self.blobs.put(sha, data)
        return data

    async def prefetch(self, paths: Iterable[str], progress: ProgressFn | None = None) -> None:
        """Fetch the blobs of many files concurrently (search), reporting progress."""
        shas = {item.sha for p in paths if p not in self.overlay and (item := self.index.get(p))
                and item.is_regular and item.sha not in self.blobs}
        gate = asyncio.Semaphore(FETCH_CONCURRENCY)
        done = 0

        async def one(sha: str) -> None:
            nonlocal done
            async with gate:
                await self.blob(sha)
            done += 1
            if progress:
                progress("fetching files", done, len(shas))

        await asyncio.gather(*(one(sha) for sha in sorted(shas)))

    # -- writing (the overlay) --------------------------------------------------------------------
    async def stage(self, path: str, text: str | None) -> OverlayFile | None:
        """Record path's new text ("\\n" line ends), or None to delete it; returns the overlay entry."""
        item = self.index.get(path)
        if item is not None and not item.is_regular:
            raise WorkspaceError(f"{path} is a symbolic link or submodule; coder-tui edits regular files only")
        self._live = None
        if text is None:
            entry = OverlayFile.of(None) if item is not None else None
        else:
            base = await self.committed(path) if item is not None else None
            previous = self.overlay.get(path)
            fmt = previous.format if previous and not previous.deleted else (base[1] if base else None)
            entry = None if base is not None and base == (text, fmt) else OverlayFile.of(text, fmt)
        if entry is None:
            self.overlay.pop(path, None)  # what the commit has: nothing to publish
        else:
            self.overlay[path] = entry
        return entry

    def staged(self) -> list[StagedFile]:
        result = []
        for path, entry in sorted(self.overlay.items()):
            if entry.deleted:
                result.append(StagedFile(path, "deleted"))
            else:
                result.append(StagedFile(path, "modified" if path in self.index.files else "added"))
        return result

    def status(self) -> RepoStatus:
        return RepoStatus(self.full_name, self.ref, self.work_branch, self.staged(), self.client.rate(),
                          self.pull_request)

    @property
    def pr_base(self) -> str:
        """The branch a pull request targets: the ref when it is a branch, else the default."""
        return self.ref if self.ref_is_branch else self.default_branch


def _tree_items(entries: Iterable[Any], prefix: str) -> tuple[list[TreeItem], set[str]]:
    items, dirs = [], set()
    for entry in entries:
        path = f"{prefix}{entry.path}"
        if entry.type == "tree":
            dirs.add(path)
        else:
            items.append(TreeItem(path, entry.mode, entry.sha, entry.size or 0))
    return items, dirs


def work_branch_name(task: str) -> str:
    """coder-tui/<short slug of the task>, or a dated name when there is no task yet."""
    words = re.findall(r"[a-z0-9]+", task.lower())[:6]
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > 40:
            break
        slug = candidate
    return f"coder-tui/{slug or dt.datetime.now().strftime('session-%m%d-%H%M')}"
