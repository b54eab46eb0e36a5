"""The map's durable store: one SQLite file per repository under the user data folder.

Files are keyed by path with their content hash (the git blob sha, on GitHub the tree's own);
summaries are keyed by that hash, so an unchanged file is never summarised twice and a changed
one is summarised again. Every summary and every explored folder is its own committed
transaction: a crash mid-build loses at most the file in progress. Folders are 0700 and files
0600; several processes (the app, `explore`, `map`) may share one store.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent import paths
from agent.knowledge.symbols import Symbol

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, sha TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    language TEXT, parsed INTEGER NOT NULL, defs TEXT NOT NULL, refs TEXT NOT NULL, error TEXT);
CREATE TABLE IF NOT EXISTS summaries (
    sha TEXT PRIMARY KEY, path TEXT NOT NULL, data TEXT NOT NULL, model TEXT, cost REAL);
CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, explored_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class StoreError(Exception):
    """The store cannot be opened or written; the message names the file."""


def private_dir(path: Path) -> Path:
    """Create path (and parents) readable by the user only."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def open_private_db(path: Path) -> sqlite3.Connection:
    """A SQLite connection to a 0600 file in a 0700 folder."""
    private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
        db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        db.execute("PRAGMA busy_timeout = 30000")
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
    return db


def repo_key(label: str) -> str:
    """A folder name for a repository label: readable, and unique through a short hash."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-")[-48:] or "workspace"
    return f"{slug}-{hashlib.sha1(label.encode()).hexdigest()[:10]}"


def knowledge_dir(key: str) -> Path:
    return paths.data_dir() / "knowledge" / key


@dataclass
class FileRecord:
    path: str
    sha: str
    size: int
    mtime_ns: int = 0
    language: str | None = None
    parsed: bool = False  # symbols extracted (on GitHub only once the blob was read)
    defs: tuple[Symbol, ...] = ()
    refs: frozenset[str] = frozenset()
    error: str | None = None


class MapStore:
    def __init__(self, key: str) -> None:
        self.key = key
        self.path = knowledge_dir(key) / "map.sqlite3"
        self.db = open_private_db(self.path)
        try:
            self.db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path} is not a usable map store ({exc}); delete it to start over") from None

    def close(self) -> None:
        self.db.close()

    # -- files ----------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        rows = self.db.execute("SELECT path, sha, size, mtime_ns, language, parsed, defs, refs, error FROM files")
        return {row[0]: _record(row) for row in rows}

    def put_files(self, records: Iterable[FileRecord]) -> None:
        rows = [(r.path, r.sha, r.size, r.mtime_ns, r.language, int(r.parsed),
                 json.dumps([s.to_json() for s in r.defs]), json.dumps(sorted(r.refs)), r.error)
                for r in records]
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def drop_files(self, gone: Iterable[str]) -> None:
        """Forget deleted files, and summaries of content no file has any more."""
        with self._transaction():
            self.db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in gone])
            self.db.execute("DELETE FROM summaries WHERE sha NOT IN (SELECT sha FROM files)")

    # -- summaries ------------------------------------------------------------------------------
    def summaries(self) -> dict[str, dict[str, Any]]:
        """Summary data by content hash."""
        return {sha: json.loads(data) for sha, data in self.db.execute("SELECT sha, data FROM summaries")}

    def summarised_shas(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT sha FROM summaries")}

    def put_summary(self, sha: str, path: str, data: dict[str, Any], model: str, cost: float | None) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?, ?)",
                            (sha, path, json.dumps(data), model, cost))

    # -- exploration ----------------------------------------------------------------------------
    def explored_dirs(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT path FROM dirs")}

    def mark_dir(self, path: str, when: str) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO dirs VALUES (?, ?)", (path, when))

    def get_meta(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_meta(self, key: str, value: Any) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def _transaction(self) -> Any:
        return _Transaction(self.db, self.path)


class _Transaction:
    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db, self.path = db, path

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write {self.path}: {exc}") from None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if kind is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.Error as error:
                self.db.execute("ROLLBACK")
                raise StoreError(f"cannot write {self.path}: {error}") from None
        self.db.execute("ROLLBACK")


def _record(row: tuple[Any, ...]) -> FileRecord:
    return FileRecord(row[0], row[1], row[2], row[3], row[4], bool(row[5]),
                      tuple(Symbol.from_json(s) for s in json.loads(row[6])), frozenset(json.loads(row[7])), row[8])


def git_blob_sha(data: bytes) -> str:
    """What `git hash-object` prints for these bytes (GitHub's tree carries the same)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()
