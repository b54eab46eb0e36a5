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
from agent import paths as paths_module  # `paths` is also a common local name below

BRANCH = "refs/heads/checkpoints"
TRAILER = "coder-tui-checkpoint:"
# Objects and index readable by the user only, whatever the umask (git applies it to new files).
PRIVATE = {**gitsafe.NEUTRAL, "core.sharedRepository": "0600"}
TOUCHED = "coder-tui-touched"  # JSON lines: the files the agent changed after each checkpoint


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
    def _git(self, *args: str, istream: str | None = None) -> str:
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
            if istream is None:
                return self._git_cmd.execute(["git", *args])  # type: ignore[union-attr]
            return self._feed(args, istream)
        except GitCommandError as exc:
            detail = (exc.stderr or str(exc)).strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {detail[-1] if detail else exc}") from None

    def _feed(self, args: tuple[str, ...], text: str) -> str:
        """`git ARGS` with `text` on its standard input (paths, NUL-separated)."""
        import subprocess

        from git.exc import GitCommandError

        env = {**os.environ, **self._git_cmd._environment}  # type: ignore[union-attr]
        done = subprocess.run(["git", *args], cwd=self.root, env=env, input=text.encode(), capture_output=True)
        if done.returncode != 0:
            raise GitCommandError(["git", *args], done.returncode, done.stderr)
        return done.stdout.decode("utf-8", "replace").strip()

    def _ensure_repo(self) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        import shutil

        from git import Repo
        from git.exc import GitCommandError

        try:
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
        except (GitCommandError, OSError) as exc:  # a full disk: no half-made repository is left to trip on
            shutil.rmtree(self.git_dir, ignore_errors=True)
            detail = (getattr(exc, "stderr", "") or str(exc)).strip().splitlines()
            raise CheckpointError(f"cannot create the checkpoint store {self.git_dir}: "
                                  f"{detail[-1] if detail else exc}") from None

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

    def restore_sync(self, ref: str | None = None, include_untouched: bool = False) -> tuple[CheckpointInfo, CheckpointInfo]:
        """Restore a checkpoint (default: step back to the previous one).

        Returns (restored, restore_point); the restore point records the state just before, so a
        restore can itself be undone by id. Only the files the agent changed since the checkpoint
        go back (new ones are removed unless the restored .gitignore rules ignore them): files it
        never touched, such as one the user made by hand, stay as they are unless
        `include_untouched` (see `untouched` for the list to show the user first).
        """
        with self._locked():
            return self._restore(ref, include_untouched)

    def untouched(self, ref: str | None = None) -> list[str]:
        """The files a restore of `ref` would leave alone: changed since it, never by the agent."""
        with self._locked():
            target = self.find(ref) if ref else self._previous(self._snapshot_tree())
            changed = self._changed(target.tree, self._snapshot_tree())
            return sorted(set(changed) - self._touched_since(target))

    def _restore(self, ref: str | None, include_untouched: bool) -> tuple[CheckpointInfo, CheckpointInfo]:
        current = self._snapshot_tree()
        target = self.find(ref) if ref else self._previous(current)
        changed = self._changed(target.tree, current)
        paths = changed if include_untouched else [p for p in changed if p in self._touched_since(target)]
        saved = self._create(f"before restoring {target.id}", restore_point=True, restored=target.id)
        present = set(self._git("ls-tree", "-r", "-z", "--name-only", target.tree, "--", *paths).split("\0")) - {""} \
            if paths else set()
        self._git("read-tree", target.tree)
        if present:
            self._git("checkout-index", "--force", "-z", "--stdin", istream=_z(sorted(present)))
        gone = [p for p in paths if p not in present]
        for path in sorted(set(gone) - self._ignored(gone)):  # build output the restored rules ignore stays
            _remove(self.root, path)
        self._note(paths, saved.id)  # a later undo walks back through what this one changed
        self._git("add", "--all", ".")  # the index is the files as they are now, kept ones included
        return target, saved

    # -- what the agent changed ---------------------------------------------------------------
    def note_touched_sync(self, paths: list[str] | None = None) -> None:
        """Record the files the agent changed since the newest checkpoint: `paths`, or (None, after a
        command) every file that differs from the snapshot it took."""
        with self._locked():
            head = self._head()
            if head is None:
                return
            if paths is None:
                paths = self._git("diff", "--name-only", "-z", "--no-renames").split("\0")
                paths += self._git("ls-files", "--others", "--exclude-standard", "-z").split("\0")
            self._note(paths, head)

    async def note_touched(self, paths: list[str] | None = None) -> None:
        await asyncio.to_thread(self.note_touched_sync, paths)

    def _note(self, paths: list[str], after: str) -> None:
        paths = sorted({p for p in paths if p})
        if not paths:
            return
        line = json.dumps({"after": after, "paths": paths}) + "\n"
        fd = paths_module.open_private(self.git_dir / TOUCHED)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def _touched_since(self, target: CheckpointInfo) -> set[str]:
        """The files the agent touched after `target` was taken (and the restores since changed)."""
        newer = set()
        for item in self.list():
            newer.add(item.id)
            if item.id == target.id:
                break
        touched: set[str] = set()
        try:
            lines = (self.git_dir / TOUCHED).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return touched
        for line in lines:
            try:
                record = json.loads(line)
                if str(record["after"])[:10] in newer:
                    touched.update(str(p) for p in record["paths"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut off by a crash
        return touched

    def _ignored(self, paths: list[str]) -> set[str]:
        if not paths:
            return set()
        try:
            out = self._git("check-ignore", "--no-index", "-z", "--stdin", istream=_z(paths))
        except CheckpointError:  # exit 1: none of them is ignored
            return set()
        return set(out.split("\0")) - {""}

    def _changed(self, old_tree: str, new_tree: str) -> list[str]:
        out = self._git("diff-tree", "-r", "-z", "--name-only", "--no-renames", old_tree, new_tree)
        return [p for p in out.split("\0") if p]

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

    async def restore(self, ref: str | None = None, include_untouched: bool = False) -> tuple[CheckpointInfo, CheckpointInfo]:
        return await asyncio.to_thread(self.restore_sync, ref, include_untouched)


def _z(paths: list[str]) -> str:
    return "".join(p + "\0" for p in paths)


def _remove(root: Path, path: str) -> None:
    """Remove a file the agent created, and the folders that it leaves empty."""
    target = root / path
    try:
        target.unlink()
    except FileNotFoundError:
        return
    for folder in target.parents:
        if folder == root:
            break
        try:
            folder.rmdir()
        except OSError:
            break


def _meta(body: str) -> dict[str, object]:
    for line in body.splitlines():
        if line.startswith(TRAILER):
            try:
                return json.loads(line[len(TRAILER):])
            except json.JSONDecodeError:
                return {}
    return {}
