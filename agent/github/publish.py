"""Publishing the overlay: one commit on the work branch through the Git Data API.

Blobs (inline in the tree for small texts), one tree on top of the parent's, one commit, then
the ref: created when the branch is new, else moved forward without force. If the branch moved
since the edits were made, each edited file is merged three-way onto the branch's version; when
any merge conflicts nothing is published and the message says which files and why. Never the
default branch, never a force-push.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.diffing import FileChange, count_changes
from agent.github.errors import BinaryFile, GitHubError, NotFound, PublishConflict
from agent.github.merge import merge3
from agent.github.remote import RemoteRepo, StagedFile
from agent.github.spec import ref_problem
from agent.github.state import OverlayFile
from agent.github.tree import REGULAR
from agent.workspaces import textio

INLINE_LIMIT = 64 * 1024  # larger texts go up as separate blobs
ATTEMPTS = 3


@dataclass(frozen=True)
class PublishResult:
    branch: str
    commit: str
    parent: str
    files: list[StagedFile]
    message: str
    created_branch: bool
    rebased_onto: str | None = None  # the branch head we merged onto, when it had moved


@dataclass
class _Plan:
    parent: str
    contents: dict[str, bytes | None] = field(default_factory=dict)  # final bytes per path, None deletes
    rebased: bool = False


class Publisher(Protocol):
    """Turns unpublished work into a commit on the work branch (API overlay or a clone's push)."""

    @property
    def branch(self) -> str: ...

    def has_unpublished(self) -> bool: ...

    def has_published(self) -> bool: ...

    async def publish(self, title: str | None = None) -> PublishResult: ...


class ApiPublisher:
    """Publishing a RemoteRepo's overlay through the Git Data API."""

    def __init__(self, remote: RemoteRepo) -> None:
        self.remote = remote

    @property
    def branch(self) -> str:
        return self.remote.work_branch

    def has_unpublished(self) -> bool:
        return bool(self.remote.overlay)

    def has_published(self) -> bool:
        return self.remote.published_head is not None

    async def publish(self, title: str | None = None) -> PublishResult:
        return await publish(self.remote, title)


class _RefMoved(Exception):
    """The ref changed between reading and updating it; plan again."""


async def publish(remote: RemoteRepo, title: str | None = None) -> PublishResult:
    """Make one commit of the overlay on the work branch and clear the overlay."""
    staged = remote.staged()
    if not staged:
        raise GitHubError("nothing to publish: no file has been changed")
    remote.client.require_token(f"publishing to {remote.full_name}")
    _check_branch(remote)
    message = await commit_message(remote, title)
    for _ in range(ATTEMPTS):
        head = await remote.branch_head(remote.work_branch)
        plan = await _plan(remote, head)
        commit = await _write_commit(remote, plan, message)
        try:
            await _move_ref(remote, head, commit)
        except _RefMoved:
            continue
        remote.published_head = commit
        remote.overlay = {}
        await remote.load_tree(commit)
        return PublishResult(remote.work_branch, commit, plan.parent, staged, message,
                             created_branch=head is None, rebased_onto=head if plan.rebased else None)
    raise GitHubError(f"branch {remote.work_branch} kept moving while publishing; nothing was published, try again")


def _check_branch(remote: RemoteRepo) -> None:
    branch = remote.work_branch
    problem = ref_problem(branch)
    if problem:
        raise GitHubError(f"work branch name {branch!r} is not valid: {problem}")
    protected = {remote.default_branch} | ({remote.ref} if remote.ref_is_branch else set())
    if branch in protected:
        raise GitHubError(f"refusing to publish to {branch}: coder-tui commits only to its own work branch, "
                          "never to the default or base branch")


async def _plan(remote: RemoteRepo, head: str | None) -> _Plan:
    if head is None or head == remote.base_commit:
        return _Plan(head or remote.base_commit, {p: _encode(e) for p, e in remote.overlay.items()})
    plan = _Plan(head, rebased=True)
    conflicts: list[str] = []
    for path, ours in remote.overlay.items():
        theirs = await _text_at(remote, head, path)
        base = await _base_text(remote, path)
        clean, merged = merge3(base[0] if base else None, ours.text, theirs[0] if theirs else None)
        if not clean:
            conflicts.append(path)
            continue
        # keep their encoding and line ends unless our edit changed them
        fmt = theirs[1] if theirs and (base is None or base[1] == ours.format) else ours.format
        content = None if merged is None else textio.encode(merged, fmt)
        if content != (theirs[2] if theirs else None):
            plan.contents[path] = content
    if conflicts:
        raise PublishConflict(
            f"branch {remote.work_branch} moved to {head[:7]} since these edits were made, and its "
            f"changes overlap them in {', '.join(sorted(conflicts))}. Nothing was published; the edits "
            "are kept. Publish to a new branch, or re-read those files on the branch and redo the edits."
        )
    if not plan.contents:
        raise GitHubError(f"branch {remote.work_branch} already contains these changes; nothing to publish")
    return plan


def _encode(entry: OverlayFile) -> bytes | None:
    return None if entry.text is None else textio.encode(entry.text, entry.format)


async def _base_text(remote: RemoteRepo, path: str) -> tuple[str, textio.TextFormat] | None:
    try:
        return await remote.committed(path)
    except BinaryFile:
        return None  # a binary file we only delete: merge3 sees it as absent on our side's base


async def _text_at(remote: RemoteRepo, commit: str, path: str) -> tuple[str, textio.TextFormat, bytes] | None:
    """path's text, format and bytes at commit via the contents API (blobs when too large for it)."""
    try:
        content: Any = await remote.client.call(
            f"reading {path} at {commit[:7]}", lambda: remote.api.get_contents(path, ref=commit)
        )
    except NotFound:
        return None
    if isinstance(content, list) or content.type != "file":
        raise PublishConflict(f"{path} is no longer a regular file on {remote.work_branch}; nothing was published")
    if content.encoding == "base64":
        data = base64.b64decode(content.content)
    else:  # GitHub leaves content empty above 1 MB: read the blob instead
        data = await remote.blob(content.sha)
    try:
        text, fmt = textio.decode(data)
    except textio.BinaryFileError:
        raise PublishConflict(f"{path} is a binary file on {remote.work_branch}; nothing was published") from None
    return text, fmt, data


async def _write_commit(remote: RemoteRepo, plan: _Plan, message: str) -> str:
    from github import InputGitTreeElement

    call = remote.client.call
    parent = await call("reading the parent commit", lambda: remote.api.get_git_commit(plan.parent))
    elements = []
    for path, data in sorted(plan.contents.items()):
        item = remote.index.get(path)
        mode = item.mode if item is not None and item.is_regular else REGULAR
        inline = _inline_text(data)
        if data is None:
            elements.append(InputGitTreeElement(path, mode, "blob", sha=None))
        elif inline is not None:
            elements.append(InputGitTreeElement(path, mode, "blob", content=inline))
        else:
            encoded = base64.b64encode(data).decode()
            blob = await call(f"uploading {path}", lambda e=encoded: remote.api.create_git_blob(e, "base64"), write=True)
            elements.append(InputGitTreeElement(path, mode, "blob", sha=blob.sha))
    tree = await call("writing the tree", lambda: remote.api.create_git_tree(elements, parent.tree), write=True)
    commit = await call("writing the commit", lambda: remote.api.create_git_commit(message, tree, [parent]), write=True)
    return commit.sha


def _inline_text(data: bytes | None) -> str | None:
    """Small UTF-8 content goes inside the tree request (one write less per file)."""
    if data is None or len(data) > INLINE_LIMIT:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


async def _move_ref(remote: RemoteRepo, head: str | None, commit: str) -> None:
    branch = remote.work_branch
    action = f"updating branch {branch}"
    try:
        if head is None:
            await remote.client.call(
                f"creating branch {branch}",
                lambda: remote.api.create_git_ref(f"refs/heads/{branch}", commit), write=True,
            )
            return
        ref = await remote.client.call(action, lambda: remote.api.get_git_ref(f"heads/{branch}"))
        if ref.object.sha != head:
            raise _RefMoved
        await remote.client.call(action, lambda: ref.edit(commit, force=False), write=True)
    except GitHubError as exc:
        text = str(exc)
        if "already exists" in text or "not a fast forward" in text:
            raise _RefMoved from None
        raise


async def commit_message(remote: RemoteRepo, title: str | None = None) -> str:
    """A subject naming the change and a body listing each file with its line counts."""
    staged = remote.staged()
    lines = []
    for item in staged:
        base = None if item.status == "added" else await _base_text(remote, item.path)
        change = FileChange(item.path, base[0] if base else None, remote.overlay[item.path].text)
        added, removed = count_changes(change)
        lines.append(f"- {item.status}: {item.path} (+{added} -{removed})")
    subject = (title or "").strip().splitlines()[0] if (title or "").strip() else subject_line(staged)
    return f"{subject}\n\n" + "\n".join(lines) + "\n\nPublished by coder-tui.\n"


def subject_line(staged: list[StagedFile]) -> str:
    """'Update a.py', 'Add a.py and b.py', 'Change 3 files'."""
    verbs = {"added": "Add", "modified": "Update", "deleted": "Delete"}
    kinds = {item.status for item in staged}
    verb = verbs[kinds.pop()] if len(kinds) == 1 else "Change"
    names = [item.path for item in staged]
    if len(names) == 1:
        return f"{verb} {names[0]}"
    if len(names) == 2:
        return f"{verb} {names[0]} and {names[1]}"
    return f"{verb} {len(names)} files"
