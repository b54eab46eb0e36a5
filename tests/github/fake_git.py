"""A real bare git repository behind the fake GitHub server.

Objects are written with git plumbing through GitPython (`hash-object` via the object database,
`commit-tree`, `update-ref`), so what the client publishes is real history that `git fsck`,
`git log` and `git diff` can check.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

import git
from gitdb import IStream

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class Entry:
    """One tree entry: mode as git writes it (100644, 100755, 120000, 160000, 040000)."""

    mode: str
    type: str  # blob | tree | commit
    sha: str
    size: int | None = None


class NotFast(Exception):
    """A ref update that is not a fast-forward."""


class StaleRef(Exception):
    """A compare-and-swap ref update lost a race."""


class BareStore:
    """Plumbing over one bare repository; every call is serialised by a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = git.Repo.init(path, bare=True, initial_branch="main")
        with self.repo.config_writer() as config:  # serve blobless (--filter=blob:none) clones
            config.set_value("uploadpack", "allowFilter", "true")
            config.set_value("uploadpack", "allowAnySHA1InWant", "true")
        self.lock = threading.RLock()

    # -- objects ------------------------------------------------------------------------
    def write_object(self, kind: str, data: bytes) -> str:
        with self.lock:
            stream = self.repo.odb.store(IStream(kind, len(data), BytesIO(data)))
        return stream.hexsha.decode() if isinstance(stream.hexsha, bytes) else stream.hexsha

    def write_blob(self, data: bytes) -> str:
        return self.write_object("blob", data)

    def object_type(self, sha: str) -> str | None:
        if not _is_hex(sha):
            return None
        with self.lock:
            try:
                return self.repo.git.cat_file("-t", sha)
            except git.GitCommandError:
                return None

    def read_blob(self, sha: str) -> bytes | None:
        if self.object_type(sha) != "blob":
            return None
        with self.lock:
            return self.repo.odb.stream(bytes.fromhex(sha)).read()

    def write_tree(self, flat: dict[str, Entry]) -> str:
        """Write nested trees for a flat {path: entry} map (leaves only) and return the root."""
        dirs: dict[str, dict[str, Entry]] = {"": {}}
        for path, entry in flat.items():
            parent, _, name = path.rpartition("/")
            dirs.setdefault(parent, {})[name] = entry
            while parent:
                grand = parent.rpartition("/")[0]
                dirs.setdefault(grand, {})
                parent = grand
        # deepest directories first, so each parent sees its children's shas
        for directory in sorted(dirs, key=lambda d: d.count("/") + bool(d), reverse=True):
            sha = self.write_object("tree", _serialize_tree(dirs[directory]))
            if not directory:
                return sha
            parent, _, name = directory.rpartition("/")
            dirs[parent][name] = Entry("40000", "tree", sha)
        raise AssertionError("unreachable: the root is always written last")

    def list_tree(self, sha: str, recursive: bool) -> dict[str, Entry]:
        """{path: entry} of a tree; recursive lists subtrees too (like GitHub's recursive=1)."""
        args = ["-l", "--full-tree"] + (["-r", "-t"] if recursive else []) + [sha]
        with self.lock:
            out = self.repo.git.ls_tree(*args)
        result: dict[str, Entry] = {}
        for line in out.splitlines():
            meta, path = line.split("\t", 1)
            mode, kind, obj, size = meta.split()
            result[path] = Entry(mode, kind, obj, None if size == "-" else int(size))
        return result

    def tree_of(self, commit_sha: str) -> str:
        with self.lock:
            return self.repo.commit(commit_sha).tree.hexsha

    def leaves(self, tree_sha: str) -> dict[str, Entry]:
        return {p: e for p, e in self.list_tree(tree_sha, True).items() if e.type != "tree"}

    def commit_tree(
        self, tree: str, parents: list[str], message: str, author: tuple[str, str, str]
    ) -> str:
        """commit-tree with author and committer (name, email, 'epoch +0000')."""
        name, email, date = author
        env = {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": date,
        }
        args: list[str] = [tree]
        for parent in parents:
            args += ["-p", parent]
        with self.lock:
            proc = subprocess.run(
                ["git", "commit-tree", *args],
                cwd=self.path,
                input=message.encode(),
                capture_output=True,
                env={**_base_env(), **env},
                check=True,
            )
        return proc.stdout.decode().strip()

    # -- refs ---------------------------------------------------------------------------
    def ref_sha(self, ref: str) -> str | None:
        with self.lock:
            try:
                return self.repo.git.rev_parse("--verify", "-q", f"{ref}^{{commit}}")
            except git.GitCommandError:
                return None

    def refs(self, prefix: str = "refs/") -> dict[str, str]:
        with self.lock:
            out = self.repo.git.for_each_ref("--format=%(refname) %(objectname)", prefix)
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def resolve(self, rev: str) -> str | None:
        """A branch, tag or (abbreviated) commit sha to a full commit sha."""
        for candidate in (f"refs/heads/{rev}", f"refs/tags/{rev}"):
            sha = self.ref_sha(candidate)
            if sha:
                return sha
        if _is_hex(rev) and len(rev) >= 4:
            return self.ref_sha(rev)
        return None

    def update_ref(self, ref: str, new: str, old: str | None, force: bool = False) -> None:
        """Move ref to new; refuses non-fast-forwards unless force; CAS against old."""
        with self.lock:
            if old and not force and not self.is_ancestor(old, new):
                raise NotFast(ref)
            try:
                self.repo.git.update_ref(ref, new, old or "0" * 40)
            except git.GitCommandError as exc:
                raise StaleRef(ref) from exc

    def is_ancestor(self, old: str, new: str) -> bool:
        with self.lock:
            try:
                self.repo.git.merge_base("--is-ancestor", old, new)
                return True
            except git.GitCommandError:
                return False

    def delete_ref(self, ref: str) -> None:
        with self.lock:
            self.repo.git.update_ref("-d", ref)

    # -- conveniences for tests -----------------------------------------------------------
    def commit_files(
        self,
        branch: str,
        files: dict[str, bytes | str | None],
        message: str,
        author: tuple[str, str] = ("Someone Else", "else@example.test"),
        mode: str = "100644",
    ) -> str:
        """Commit files on a branch (None deletes a path), as another person pushing would."""
        with self.lock:
            head = self.ref_sha(f"refs/heads/{branch}")
            flat = self.leaves(self.tree_of(head)) if head else {}
            for path, data in files.items():
                if data is None:
                    flat.pop(path, None)
                    continue
                raw = data.encode() if isinstance(data, str) else data
                flat[path] = Entry(mode, "blob", self.write_blob(raw))
            tree = self.write_tree(flat)
            sha = self.commit_tree(tree, [head] if head else [], message, (*author, now_stamp()))
            self.update_ref(f"refs/heads/{branch}", sha, head)
            return sha

    def file_at(self, rev: str, path: str) -> bytes | None:
        sha = self.resolve(rev) or rev
        entry = self.leaves(self.tree_of(sha)).get(path)
        return self.read_blob(entry.sha) if entry else None

    def fsck(self) -> str:
        with self.lock:
            return self.repo.git.fsck("--strict", "--no-dangling")


def now_stamp() -> str:
    return f"{int(time.time())} +0000"


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def _is_hex(text: str) -> bool:
    return bool(text) and len(text) <= 40 and all(c in "0123456789abcdef" for c in text.lower())


def _sort_key(item: tuple[str, Entry]) -> bytes:
    # git orders tree entries by name, comparing a subtree's name as if it ended in "/"
    name, entry = item
    return name.encode() + (b"/" if entry.type == "tree" else b"")


def _serialize_tree(entries: dict[str, Entry]) -> bytes:
    out = bytearray()
    for name, entry in sorted(entries.items(), key=_sort_key):
        mode = entry.mode.lstrip("0") or "0"
        out += f"{mode} ".encode() + name.encode() + b"\0" + bytes.fromhex(entry.sha)
    return bytes(out)
