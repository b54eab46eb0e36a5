"""The file index of one commit (from the recursive tree), and a byte-bounded blob cache."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from agent.workspaces.base import DirEntry

REGULAR = "100644"
EXECUTABLE = "100755"
SYMLINK = "120000"
SUBMODULE = "160000"


@dataclass(frozen=True)
class TreeItem:
    path: str
    mode: str
    sha: str
    size: int = 0

    @property
    def is_regular(self) -> bool:
        return self.mode in (REGULAR, EXECUTABLE)


class TreeIndex:
    """Leaves (files, symlinks, submodules) by path, and every folder that holds one."""

    def __init__(self, items: list[TreeItem], dirs: set[str] | None = None) -> None:
        self.files: dict[str, TreeItem] = {item.path: item for item in items}
        self.dirs: set[str] = set(dirs or ())
        for path in self.files:
            self.dirs.update(parent_dirs(path))

    def get(self, path: str) -> TreeItem | None:
        return self.files.get(path)

    def is_dir(self, path: str) -> bool:
        return path == "" or path in self.dirs


def parent_dirs(path: str) -> list[str]:
    """'a/b/c.py' -> ['a', 'a/b']."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def children(paths: list[str], dirs: set[str], sizes: dict[str, int], base: str) -> list[DirEntry]:
    """The direct entries of folder `base` among the given file paths and folders."""
    prefix = f"{base}/" if base else ""
    found: dict[str, DirEntry] = {}
    for directory in dirs:
        if directory.startswith(prefix) and "/" not in directory[len(prefix):] and directory != base:
            name = directory[len(prefix):]
            found[name] = DirEntry(name, True)
    for path in paths:
        if path.startswith(prefix) and "/" not in path[len(prefix):]:
            name = path[len(prefix):]
            found[name] = DirEntry(name, False, sizes.get(path, 0))
    return sorted(found.values(), key=lambda e: (not e.is_dir, e.name))


class BlobCache:
    """Blob bytes by sha, least recently used dropped past a byte budget."""

    def __init__(self, budget: int = 64 * 1024 * 1024) -> None:
        self.budget = budget
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0

    def get(self, sha: str) -> bytes | None:
        data = self._items.get(sha)
        if data is not None:
            self._items.move_to_end(sha)
        return data

    def put(self, sha: str, data: bytes) -> None:
        if sha in self._items:
            return
        self._items[sha] = data
        self._size += len(data)
        while self._size > self.budget and len(self._items) > 1:
            _, dropped = self._items.popitem(last=False)
            self._size -= len(dropped)

    def __contains__(self, sha: str) -> bool:
        return sha in self._items
