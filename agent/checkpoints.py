"""Checkpoints: snapshots of a workspace folder in a shadow git repository.

The shadow repository lives under the user data dir, one per workspace, with its own index; the
workspace's own `.git` (history, index, branches) is never read or written. Snapshots honour the
workspace's .gitignore, so build output and dependencies are not copied. Restoring writes the
snapshot's files back and removes files created since, including changes made by shell commands.

The shadow repository is private to the user (folders 0700, objects 0400/0600): a snapshot copies
files such as a 0600 `.env`. A run killed mid-checkpoint leaves git's `index.lock` behind; every
operation holds an advisory lock on the repository (released by the kernel when its process
dies), so a git lock file found while holding it is stale and is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent import gitsafe, paths

BRANCH = "refs/heads/checkpoints"
TRAILER = "coder-tui-checkpoint:"
# Objects and index readable by the user only, whatever the umask (git applies it to new files).
PRIVATE = {**gitsafe.NEUTRAL, "core.sharedRepository": "0600"}


class CheckpointError(Exception):
    pass


@dataclass(frozen=True)
class CheckpointInfo:
    id: str
    label: str
    created: float
    tree: str
    restore_point: bool = False  # made automatically before a restore
    restored: str | None = None  # for a restore point: the checkpoint that was restored


class Checkpoints:
    def __init__(self, workspace_root: Path, store: Path | None = None) -> None:
        self.root = Path(os.path.realpath(workspace_root))
        digest = hashlib.sha1(str(self.root).encode()).hexdigest()[:16]
        self.git_dir = (store or paths.checkpoints_dir()) / f"{digest}.git"
        self._git_cmd = None
        self._thread_lock = threading.Lock()

    # -- plumbing -------------------------------------------------------------------------
    def _git(self, *args: str) -> str:
        from git import Git
        from git.exc import GitCommandError

        if self._git_cmd is None:
            self._ensure_repo()
            cmd = Git(str(self.root))
            cmd.update_environment(
                GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.root),
                GIT_AUTHOR_NAME="coder-tui", GIT_AUTHOR_EMAIL="coder-tui@localhost",
                GIT_COMMITTER_NAME="coder-tui", GIT_COMMITTER_EMAIL="coder-tui@localhost",
                GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
                **gitsafe.environment(PRIVATE, base={}),
            )
            self._git_cmd = cmd
        try:
            return self._git_cmd.execute(["git", *args])  # type: ignore[union-attr]
        except GitCommandError as exc:
            detail = (exc.stderr or str(exc)).strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {detail[-1] if detail else exc}") from None

    def _ensure_repo(self) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        from git import Repo

        paths.private_dir(self.git_dir.parent)
        repo = Repo.init(str(self.git_dir), bare=True)
        with repo.config_writer() as config:
            config.set_value("core", "bare", "false")
            config.set_value("core", "autocrlf", "false")
            config.set_value("commit", "gpgsign", "false")
            config.set_value("gc", "auto", "0")
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_text(".git\n")
        (self.git_dir / "coder-tui-workspace").write_text(str(self.root) + "\n")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the repository's advisory lock; git lock files found meanwhile are stale."""
        with self._thread_lock:
            self._ensure_repo()
            paths.private_dir(self.git_dir)  # also repositories made before they were private
            fd = os.open(self.git_dir / "coder-tui.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._clear_stale_locks()
                yield
            finally:
                os.close(fd)

    def _clear_stale_locks(self) -> None:
        """Remove lock files left by a git process that died (every writer holds our lock)."""
        for lock in (self.git_dir / "index.lock", self.git_dir / f"{BRANCH}.lock", self.git_dir / "HEAD.lock"):
            try:
                lock.unlink()
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise CheckpointError(
                    f"{lock} is left over from an interrupted checkpoint and cannot be removed "
                    f"({exc.strerror}); delete it by hand") from None

    def _snapshot_tree(self) -> str:
        self._git("add", "--all", ".")
        return self._git("write-tree")

    def _head(self) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "--quiet", BRANCH)
        except CheckpointError:
            return None

    # -- public API -----------------------------------------------------------------------
    def create_sync(self, label: str, restore_point: bool = False, restored: str | None = None) -> CheckpointInfo:
        with self._locked():
            return self._create(label, restore_point, restored)

    def _create(self, label: str, restore_point: bool = False, restored: str | None = None) -> CheckpointInfo:
        tree = self._snapshot_tree()
        meta = json.dumps({"label": label, "restore_point": restore_point, "restored": restored})
        parent = self._head()
        args = ["commit-tree", tree, "-m", f"{label}\n\n{TRAILER} {meta}"]
        if parent:
            args += ["-p", parent]
        commit = self._git(*args)
        self._git("update-ref", BRANCH, commit)
        return CheckpointInfo(commit[:10], label, time.time(), tree, restore_point, restored)

    async def create(self, label: str) -> CheckpointInfo:
        return await asyncio.to_thread(self.create_sync, label)

    def list(self) -> list[CheckpointInfo]:
        """Newest first."""
        if not (self.git_dir / "HEAD").exists() or self._head() is None:
            return []
        out = self._git("log", "--format=%H%x00%T%x00%ct%x00%B%x1e", BRANCH)
        items = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            commit, tree, stamp, body = record.split("\x00", 3)
            meta = _meta(body)
            restored = meta.get("restored")
            items.append(CheckpointInfo(commit[:10], str(meta.get("label", body.splitlines()[0])),
                                        float(stamp), tree, bool(meta.get("restore_point")),
                                        str(restored) if restored else None))
        return items

    def find(self, ref: str) -> CheckpointInfo:
        matches = [c for c in self.list() if c.id.startswith(ref)] if ref else []
        if not matches:
            raise CheckpointError(f"no checkpoint {ref!r} for {self.root} (see `coder-tui undo --list`)")
        if len(matches) > 1:
            raise CheckpointError(f"checkpoint id {ref!r} is ambiguous; give more characters")
        return matches[0]

    def restore_sync(self, ref: str | None = None) -> tuple[CheckpointInfo, CheckpointInfo]:
        """Restore a checkpoint (default: step back to the previous one).

        Returns (restored, restore_point); the restore point records the state just before, so a
        restore can itself be undone by id. Files created since the checkpoint are removed unless
        the restored .gitignore rules ignore them (build output and dependencies stay).
        """
        with self._locked():
            return self._restore(ref)

    def _restore(self, ref: str | None) -> tuple[CheckpointInfo, CheckpointInfo]:
        current = self._snapshot_tree()
        target = self.find(ref) if ref else self._previous(current)
        saved = self._create(f"before restoring {target.id}", restore_point=True, restored=target.id)
        self._git("read-tree", target.tree)
        self._git("checkout-index", "--all", "--force")
        self._git("clean", "--force", "-d", "--quiet")
        return target, saved

    def _previous(self, current_tree: str) -> CheckpointInfo:
        """The checkpoint an argument-less undo goes back to.

        Right after an undo (nothing changed since), continue from the one it restored, so that
        repeated undos walk back through the checkpoints.
        """
        history = self.list()
        start = 0
        if history and history[0].restore_point and history[0].restored:
            restored = next((i for i, c in enumerate(history) if c.id == history[0].restored), None)
            if restored is not None and history[restored].tree == current_tree:
                start = restored + 1
        for item in history[start:]:
            if not item.restore_point and item.tree != current_tree:
                return item
        raise CheckpointError(f"nothing to undo: no earlier checkpoint of {self.root} differs from its files now")

    async def restore(self, ref: str | None = None) -> tuple[CheckpointInfo, CheckpointInfo]:
        return await asyncio.to_thread(self.restore_sync, ref)


def _meta(body: str) -> dict[str, object]:
    for line in body.splitlines():
        if line.startswith(TRAILER):
            try:
                return json.loads(line[len(TRAILER):])
            except json.JSONDecodeError:
                return {}
    return {}
