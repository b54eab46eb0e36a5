"""What the sandbox keeps read-only inside the writable workspace, and what it sweeps up after commands.

- Every file coder-tui reads as configuration or instructions (agent/workspace_input/protected.py)
  that exists anywhere in the workspace is bound read-only. Those of the root folder that do not
  exist yet are bound too, to an empty read-only file or folder, so that a command cannot create
  them: bubblewrap makes the mount point (an empty `AGENTS.md`, an empty `.claude/`) while a
  sandboxed process runs, and it is removed when the last one ends.
- Every git repository in the workspace (a `.git` folder or file, a bare repository's folder),
  found by a walk before the session's first command, is bound read-only.
- A repository a command creates (`git init`, `git clone`, a planted `docs/.git` with a
  `core.fsmonitor`, or `HEAD`, `refs/` and `objects/` in any folder) cannot be bound before it
  exists: the walk after each command finds it and disables it (its `HEAD`, or a `.git` file or
  link, renamed with `DISABLED`), so that the user's own git or shell prompt never runs what its
  config names, outside the sandbox; the user and the model are told.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent.workspace_input import protected

DISABLED = ".disabled-by-coder-tui"
MAX_DIRS = 200_000  # a walk stops there (and says so)
MAX_BINDS = 1000
QUICK = 0.05  # seconds a command's result waits for the walk after it; longer walks report as warnings


@dataclass
class Found:
    repos: dict[str, str] = field(default_factory=dict)  # path -> "git-dir" | "git-file" | "git-link" | "bare"
    protected: list[str] = field(default_factory=list)  # existing protected files and folders
    complete: bool = True


def scan(root: Path) -> Found:
    """Every repository and every protected file or folder in the workspace at root."""
    found = Found()
    stack, seen = [str(root)], 0
    while stack:
        folder = stack.pop()
        seen += 1
        if seen > MAX_DIRS:
            found.complete = False
            break
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if folder != str(root) and {"HEAD", "refs"} <= names and names & {"objects", "commondir"}:
            found.repos[folder] = "bare"  # a repository's own folder: nothing below it is looked at
            continue
        for entry in entries:
            _sort(entry, found, stack)
    return found


def _sort(entry: os.DirEntry[str], found: Found, stack: list[str]) -> None:
    is_dir = entry.is_dir(follow_symlinks=False)
    if entry.name == ".git":
        found.repos[entry.path] = "git-link" if entry.is_symlink() else "git-dir" if is_dir else "git-file"
    elif protected.what(entry.name) is not None:
        found.protected.append(entry.path)
    elif is_dir:
        stack.append(entry.path)


@dataclass
class Guard:
    """One session's view of its workspace for the sandbox: what to bind, what commands left behind."""

    root: Path
    found: Found | None = None
    live: int = 0  # sandboxed processes running
    since: float | None = None  # when the first of the processes since the last walk started
    ghosts: set[str] = field(default_factory=set)  # mount points bwrap made for missing protected names
    walking: asyncio.Task[list[str]] | None = None

    async def ready(self) -> None:
        """The first walk (before the first command), and the one a command started, finished."""
        if self.walking is not None:
            await asyncio.shield(self.walking)
        if self.found is None:
            self.found = await asyncio.to_thread(scan, self.root)

    def binds(self) -> list[str]:
        """bwrap arguments: repositories and protected files read-only, missing protected names unmakeable."""
        found = self.found or Found()
        real_root = os.path.realpath(self.root)
        args: list[str] = []
        for path in sorted({*found.protected, *(p for p, kind in found.repos.items() if kind != "git-link")}):
            real = os.path.realpath(path)
            if os.path.exists(real) and (real == real_root or real.startswith(real_root + os.sep)):
                args += ["--ro-bind", real, real]
        args = args[: 3 * MAX_BINDS]
        if os.access(real_root, os.W_OK):
            for name, folder in protected.root_names():
                path = os.path.join(real_root, name)
                if not os.path.lexists(path) or path in self.ghosts:
                    self.ghosts.add(path)
                    args += ["--ro-bind", _empty(folder), path]
        return args

    def begin(self) -> None:
        self.live += 1
        self.since = self.since or time.time()

    async def end(self, warn: object = None) -> list[str]:
        """A sandboxed process ended: the ghosts go when none runs, and the workspace is walked for
        repositories it made. What was disabled (said here when the walk is quick, else by `warn`)."""
        self.live = max(0, self.live - 1)
        if self.live == 0:
            self._sweep()
        return await self.after(warn)

    async def after(self, warn: object = None) -> list[str]:
        """Walk again for what commands made (after a command in a shell that stays open, too)."""
        if self.walking is not None and not self.walking.done():
            await asyncio.shield(self.walking)
        since = self.since or time.time()
        if self.live == 0:
            self.since = None
        self.walking = asyncio.get_running_loop().create_task(asyncio.to_thread(self._walk, since))
        done, _ = await asyncio.wait({self.walking}, timeout=QUICK)
        if done:
            return self.walking.result()
        if callable(warn):
            self.walking.add_done_callback(lambda task: [warn(m) for m in task.result()] if not task.cancelled()
                                           and task.exception() is None else None)
        return []

    def _walk(self, since: float) -> list[str]:
        before = self.found or Found()
        now = scan(self.root)
        said = []
        for path, kind in now.repos.items():
            if path not in before.repos and _made_since(path, kind, since):
                said.append(_disable(self.root, path, kind))
        self.found = scan(self.root) if said else now
        return said

    def _sweep(self) -> None:
        for path in sorted(self.ghosts, key=len, reverse=True):
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    os.rmdir(path)  # only when empty: an approved write that replaced it stays
                elif os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) == 0:
                    os.unlink(path)
            except OSError:
                pass
        self.ghosts.clear()


def _marker(path: str, kind: str) -> str:
    return os.path.join(path, "HEAD") if kind in ("git-dir", "bare") else path


def _made_since(path: str, kind: str, since: float) -> bool:
    try:
        return os.lstat(_marker(path, kind)).st_ctime >= since - 1
    except OSError:
        return False


def _disable(root: Path, path: str, kind: str) -> str:
    marker = _marker(path, kind)
    shown = os.path.relpath(path, root)
    try:
        os.rename(marker, marker + DISABLED)
    except OSError as exc:
        return (f"a command made a git repository at {shown}, and coder-tui could not disable it ({exc.strerror}): "
                "do not run git in that folder before you have checked its config")
    return (f"a command made a git repository at {shown}; coder-tui disabled it ({os.path.relpath(marker, root)} "
            f"renamed to {os.path.basename(marker)}{DISABLED}): a repository's config can name programs "
            "(core.fsmonitor, hooks, a pager) that your own git would run outside the sandbox. Repositories are "
            "made by you or by coder-tui's own git, not by sandboxed commands; rename it back once you have "
            "checked it.")


def _empty(folder: bool) -> str:
    """An empty folder or file of ours to bind where a protected name is missing (never written:
    bound read-only; a file rather than /dev/null, which a `nodev` mount would refuse to open)."""
    from agent import paths

    base = paths.cache_dir() / "sandbox-empty"
    paths.private_dir(base)
    path = base / ("folder" if folder else "file")
    if folder:
        path.mkdir(mode=0o500, exist_ok=True)
    elif not path.exists():
        path.touch(mode=0o400)
    return str(path)
