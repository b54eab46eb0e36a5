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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent.workspace_input import protected

DISABLED = ".disabled-by-coder-tui"
MAX_DIRS = 200_000  # a walk stops there (and says so)
MAX_BINDS = 1000
QUICK = 0.02  # seconds a command's result waits for the walk after it; a longer walk tells the next result


NAMES = frozenset([*protected.FILES, *protected.FOLDERS])  # casefolded
REPO_PARTS = frozenset({"HEAD", "refs", "objects", "commondir"})
# Folders package managers fill: the instructions files packages ship there are not bound read-only
# (an install replaces them; no session reads them); repositories there are.
INSTALLED = ("node_modules", ".venv", "venv", "site-packages", "dist-packages", ".tox", ".nox")


@dataclass
class Found:
    repos: dict[str, str] = field(default_factory=dict)  # path -> "git-dir" | "git-file" | "git-link" | "bare"
    protected: list[str] = field(default_factory=list)  # existing protected files and folders
    complete: bool = True


@dataclass
class Listed:
    """What one folder held at a walk (reused while its modification time stays the same)."""

    mtime: int
    subfolders: list[str]
    repos: dict[str, str]
    protected: list[str]
    bare: bool


def scan(root: Path, cache: dict[str, Listed] | None = None) -> Found:
    """Every repository and every protected file or folder in the workspace at root. With `cache`
    (kept between walks), a folder whose modification time did not change is not listed again:
    a name made, removed or renamed in it changes it. A folder changed within the last two seconds
    is listed again next time (two changes within one tick of the clock share a time)."""
    found, cache = Found(), {} if cache is None else cache
    stack, seen, recent = [str(root)], 0, time.time_ns() - 2_000_000_000
    while stack:
        folder = stack.pop()
        seen += 1
        if seen > MAX_DIRS:
            found.complete = False
            break
        try:
            mtime = os.lstat(folder).st_mtime_ns
        except OSError:
            continue
        listed = cache.get(folder)
        if listed is None or listed.mtime != mtime:
            listed = _list(folder, mtime, folder != str(root))
            if listed is None:
                continue
            cache[folder] = listed if mtime < recent else Listed(-1, listed.subfolders, listed.repos,
                                                                  listed.protected, listed.bare)
        found.repos.update(listed.repos)
        found.protected += listed.protected
        stack += listed.subfolders
    return found


def _list(folder: str, mtime: int, below_root: bool) -> Listed | None:
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:
        return None
    parts = {entry.name for entry in entries if entry.name in REPO_PARTS}
    if below_root and {"HEAD", "refs"} <= parts and parts & {"objects", "commondir"}:
        return Listed(mtime, [], {folder: "bare"}, [], True)  # a repository's own folder: nothing below is looked at
    listed = Listed(mtime, [], {}, [], False)
    installed = any(f"{os.sep}{part}{os.sep}" in f"{folder}{os.sep}" for part in INSTALLED)
    for entry in entries:
        name = entry.name
        if name == ".git":
            listed.repos[entry.path] = ("git-link" if entry.is_symlink() else
                                        "git-dir" if entry.is_dir(follow_symlinks=False) else "git-file")
        elif name.lower() in NAMES or name.rstrip(". ").casefold() in NAMES:
            if not installed:  # a package's own AGENTS.md: the installer may replace it
                listed.protected.append(entry.path)
        elif entry.is_dir(follow_symlinks=False):
            listed.subfolders.append(entry.path)
    return listed


@dataclass
class Guard:
    """One session's view of its workspace for the sandbox: what to bind, what commands left behind."""

    root: Path
    found: Found | None = None
    live: int = 0  # sandboxed processes running
    since: float | None = None  # when the first of the processes since the last walk started
    ghosts: set[str] = field(default_factory=set)  # mount points bwrap made for missing protected names
    mine: set[str] = field(default_factory=set)  # the user's repositories: there at the start, or made between commands
    disabled: set[str] = field(default_factory=set)  # repositories coder-tui disabled (again if re-enabled)
    notes: list[str] = field(default_factory=list)  # what walks disabled, not yet told to the model
    walking: asyncio.Task[list[str]] | None = None
    listed: dict[str, Listed] = field(default_factory=dict)  # the walks' memory of unchanged folders
    again: float | None = None  # a walk is wanted once the running one ends (from this time on)
    warn: Callable[[str], None] | None = None

    async def ready(self) -> None:
        """The first walk, before the first command (later ones run beside the commands)."""
        if self.found is None:
            self.found = await asyncio.to_thread(scan, self.root, self.listed)
            self.mine = set(self.found.repos)

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
        self.since = self.since or _now()

    async def end(self, ended: bool) -> list[str]:
        """A sandboxed process ended (`ended`; the ghosts go when none runs), or a command in a shell
        that stays open did: the workspace is walked for repositories they made. What walks disabled,
        for the command's result (a long walk goes on beside the next command and tells its warnings)."""
        if ended:
            self.live = max(0, self.live - 1)
            if self.live == 0:
                self._sweep()
        since = self.since or _now()
        if self.live == 0:
            self.since = None
        self._walk_from(since)
        if self.walking is not None:
            await asyncio.wait({self.walking}, timeout=QUICK)
        said, self.notes = self.notes, []
        return said

    def _walk_from(self, since: float) -> None:
        if self.walking is not None and not self.walking.done():
            self.again = min(self.again or since, since)
            return
        self.walking = asyncio.get_running_loop().create_task(asyncio.to_thread(self._walk, since))
        self.walking.add_done_callback(self._walked)

    def _walked(self, task: asyncio.Task[list[str]]) -> None:
        said = [] if task.cancelled() or task.exception() is not None else task.result()
        self.notes += said
        for message in said:
            if self.warn is not None:
                self.warn(message)
        if self.again is not None:
            since, self.again = self.again, None
            self._walk_from(since)

    def _walk(self, since: float) -> list[str]:
        now = scan(self.root, self.listed)
        said = []
        for path, kind in now.repos.items():
            if path in self.mine or not os.path.lexists(_marker(path, kind)):
                continue
            if path in self.disabled or _made_since(path, kind, since):
                said.append(_disable(self.root, path, kind))
                self.disabled.add(path)
            else:
                self.mine.add(path)  # made by the user, between two commands
        self.found = now
        return said

    async def close(self) -> None:
        while self.walking is not None and not self.walking.done():
            await asyncio.wait({self.walking}, timeout=10)
        if self.live == 0:
            self._sweep()

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


def _now() -> float:
    """The clock file times are stamped with (a coarse one: a file made after this has a time at or after it)."""
    try:
        return time.clock_gettime(5)  # CLOCK_REALTIME_COARSE (Linux; Python names no constant for it)
    except OSError:
        return time.time() - 0.02


def _made_since(path: str, kind: str, since: float) -> bool:
    try:
        return os.lstat(_marker(path, kind)).st_ctime >= since
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
