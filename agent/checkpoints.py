"""Checkpoints: snapshots of a workspace folder in a shadow git repository.

The shadow repository lives under the user data dir, one per workspace, with its own index; the
workspace's own `.git` (history, index, branches) is never read or written. Snapshots honour the
workspace's .gitignore, so build output and dependencies are not copied. Restoring writes the
snapshot's files back and removes files created since, including changes made by shell commands.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from agent import paths

BRANCH = "refs/heads/checkpoints"
TRAILER = "coder-tui-checkpoint:"


class CheckpointError(Exception):
    pass


@dataclass(frozen=True)
class CheckpointInfo:
    id: str
    label: str
    created: float
    tree: str
    restore_point: bool = False  # made automatically before a restore


class Checkpoints:
    def __init__(self, workspace_root: Path, store: Path | None = None) -> None:
        self.root = Path(os.path.realpath(workspace_root))
        digest = hashlib.sha1(str(self.root).encode()).hexdigest()[:16]
        self.git_dir = (store or paths.checkpoints_dir()) / f"{digest}.git"
        self._git_cmd = None

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

        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        repo = Repo.init(str(self.git_dir), bare=True)
        with repo.config_writer() as config:
            config.set_value("core", "bare", "false")
            config.set_value("core", "autocrlf", "false")
            config.set_value("commit", "gpgsign", "false")
            config.set_value("gc", "auto", "0")
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_text(".git\n")
        (self.git_dir / "coder-tui-workspace").write_text(str(self.root) + "\n")

    def _snapshot_tree(self) -> str:
        self._git("add", "--all", ".")
        return self._git("write-tree")

    def _head(self) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "--quiet", BRANCH)
        except CheckpointError:
            return None

    # -- public API -----------------------------------------------------------------------
    def create_sync(self, label: str, restore_point: bool = False) -> CheckpointInfo:
        tree = self._snapshot_tree()
        meta = json.dumps({"label": label, "restore_point": restore_point})
        parent = self._head()
        args = ["commit-tree", tree, "-m", f"{label}\n\n{TRAILER} {meta}"]
        if parent:
            args += ["-p", parent]
        commit = self._git(*args)
        self._git("update-ref", BRANCH, commit)
        return CheckpointInfo(commit[:10], label, time.time(), tree, restore_point)

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
            items.append(CheckpointInfo(commit[:10], meta.get("label", body.splitlines()[0]),
                                        float(stamp), tree, bool(meta.get("restore_point"))))
        return items

    def find(self, ref: str) -> CheckpointInfo:
        matches = [c for c in self.list() if c.id.startswith(ref)] if ref else []
        if not matches:
            raise CheckpointError(f"no checkpoint {ref!r} for {self.root} (see `coder-tui undo --list`)")
        if len(matches) > 1:
            raise CheckpointError(f"checkpoint id {ref!r} is ambiguous; give more characters")
        return matches[0]

    def restore_sync(self, ref: str | None = None) -> tuple[CheckpointInfo, CheckpointInfo]:
        """Restore a checkpoint (default: the newest that differs from now).

        Returns (restored, restore_point) — the restore point records the state just before, so
        a restore can itself be undone by id.
        """
        current = self._snapshot_tree()
        if ref:
            target = self.find(ref)
        else:
            candidates = [c for c in self.list() if not c.restore_point and c.tree != current]
            if not candidates:
                raise CheckpointError(f"nothing to undo: no checkpoint of {self.root} differs from its files now")
            target = candidates[0]
        saved = self.create_sync(f"before restoring {target.id}", restore_point=True)
        self._git("read-tree", "--reset", "-u", target.tree)
        return target, saved

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
