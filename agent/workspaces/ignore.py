"""`.gitignore` rules for a folder tree (nested files, negation, directory patterns).

`.git` itself is always ignored. Rules from deeper `.gitignore` files override shallower ones,
as git does. Works the same in folders that are not git repositories. Walking never follows a
symbolic link, and ignore files are read only when they are small regular files (never a link
or a FIFO, which would block).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from agent.workspaces.safefs import read_small

if TYPE_CHECKING:
    import pathspec

ALWAYS_IGNORED = {".git"}


def _spec_of(lines: list[str]) -> pathspec.GitIgnoreSpec:
    # pathspec (tens of modules) is imported by the first folder with rules, not by every start
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


class IgnoreRules:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def _spec(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            lines: list[str] = []
            folder = self.root / rel_dir
            for name in (".gitignore",) + ((".git/info/exclude",) if not rel_dir else ()):
                data = read_small(folder / name)
                if data is not None:
                    lines += data.decode("utf-8", errors="replace").splitlines()
            self._specs[rel_dir] = _spec_of(lines) if lines else None
        return self._specs[rel_dir]

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether a workspace-relative POSIX path is ignored (its parents assumed not)."""
        parts = rel.split("/")
        if parts[-1] in ALWAYS_IGNORED:
            return True
        verdict: bool | None = None
        for depth in range(len(parts)):
            spec = self._spec("/".join(parts[:depth]))
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            include = spec.check_file(sub).include
            if include is not None:
                verdict = include
        return bool(verdict)

    def walk(self, start: str = "") -> Iterator[str]:
        """Every non-ignored regular file under start (relative POSIX paths), sorted per folder.

        Links are not yielded or followed, so nothing outside the tree is reached through them.
        """
        stack = [start]
        while stack:
            rel_dir = stack.pop()
            try:
                entries = sorted(os.scandir(self.root / rel_dir), key=lambda e: e.name)
            except OSError:
                continue
            subdirs = []
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                is_dir = entry.is_dir(follow_symlinks=False)
                if self.ignored(rel, is_dir):
                    continue
                if is_dir:
                    subdirs.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    yield rel
            stack.extend(reversed(subdirs))
