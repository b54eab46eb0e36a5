"""The map's durable store: one SQLite file per repository under the user data folder.

Files are keyed by path with their content hash (the git blob sha, on GitHub the tree's own);
summaries are keyed by that hash, so an unchanged file is never summarised twice and a changed
one is summarised again (its outdated summary is kept until then: agent/knowledge/freshen.py).
Every summary and every explored folder is its own committed transaction: a crash mid-build loses
at most the file in progress. Folders are 0700 and files 0600; several processes (the app,
`explore`, `map`) may share one store.

A damaged store (not SQLite, a malformed image, tables of another shape, rows that do not decode)
is set aside as `map.sqlite3.damaged-TIMESTAMP` and a fresh one started: the map is rebuilt, and
`take_notices()` says once what happened. Secrets in summaries (a key a file held, a `ghp_`
token) are masked before they are written: the map is fed back to the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent import paths
from agent.knowledge.symbols import Symbol
from agent.secrets import redact

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, sha TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    language TEXT, parsed INTEGER NOT NULL, defs TEXT NOT NULL, refs TEXT NOT NULL, error TEXT);
CREATE TABLE IF NOT EXISTS summaries (
    sha TEXT PRIMARY KEY, path TEXT NOT NULL, data TEXT NOT NULL, model TEXT, cost REAL);
CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, explored_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


COLUMNS = {"files": ["path", "sha", "size", "mtime_ns", "language", "parsed", "defs", "refs", "error"],
           "summaries": ["sha", "path", "data", "model", "cost"], "dirs": ["path", "explored_at"],
           "meta": ["key", "value"]}
_notices: list[str] = []
_notices_lock = threading.Lock()


class StoreError(Exception):
    """The store cannot be opened or written; the message names the file."""


class _Damaged(Exception):
    """The store's content is not what we wrote (the message says how)."""


def take_notices() -> list[str]:
    """What was set aside since the last call (each said once)."""
    with _notices_lock:
        taken, _notices[:] = list(_notices), []
    return taken


def private_dir(path: Path) -> Path:
    """Create path (and parents) readable by the user only (the data folder above it too)."""
    paths.private_dir(path)
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
            _check(self.db)
        except (_Damaged, sqlite3.DatabaseError) as exc:
            self._set_aside(str(exc))

    def close(self) -> None:
        self.db.close()

    def _set_aside(self, why: str) -> None:
        """Move the damaged store out of the way (kept for a post-mortem) and start a fresh one."""
        self.db.close()
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            for suffix in ("-wal", "-shm", "-journal"):
                extra = self.path.with_name(self.path.name + suffix)
                if extra.exists():
                    extra.replace(aside.with_name(aside.name + suffix))
            self.path.replace(aside)
        except OSError as exc:
            raise StoreError(f"{self.path} is damaged ({why}) and cannot be set aside: {exc}") from None
        with _notices_lock:
            _notices.append(f"the codebase map store {self.path} was damaged ({why}); it was set aside as "
                            f"{aside.name} and the map is built afresh")
        self.db = open_private_db(self.path)
        try:
            _check(self.db)
        except (_Damaged, sqlite3.DatabaseError) as exc:
            raise StoreError(f"cannot start a fresh map store at {self.path}: {exc}") from None

    def _decoded(self, read: Any) -> Any:
        """`read()`, or nothing after setting the store aside when its rows do not decode."""
        try:
            return read()
        except (sqlite3.DatabaseError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            self._set_aside(f"{type(exc).__name__}: {exc}"[:200])
            return read()

    # -- files ----------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        def read() -> dict[str, FileRecord]:
            rows = self.db.execute("SELECT path, sha, size, mtime_ns, language, parsed, defs, refs, error FROM files")
            return {row[0]: _record(row) for row in rows}

        return self._decoded(read)

    def put_files(self, records: Iterable[FileRecord]) -> None:
        rows = [(r.path, r.sha, r.size, r.mtime_ns, r.language, int(r.parsed),
                 redact(json.dumps([s.to_json() for s in r.defs])), redact(json.dumps(sorted(r.refs))),
                 redact(r.error) if r.error else r.error)
                for r in records]
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def drop_files(self, gone: Iterable[str]) -> None:
        """Forget deleted files, and summaries of content no file has any more (a file that changed
        keeps its outdated summary until a new one replaces it: reading it refreshes that one)."""
        with self._transaction():
            self.db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in gone])
            self.db.execute("DELETE FROM summaries WHERE sha NOT IN (SELECT sha FROM files) "
                            "AND path NOT IN (SELECT path FROM files)")

    # -- summaries ------------------------------------------------------------------------------
    def summaries(self) -> dict[str, dict[str, Any]]:
        """Summary data by content hash."""
        def read() -> dict[str, dict[str, Any]]:
            # masked on the way out too: a store written before masking may still hold a key
            rows = self.db.execute("SELECT sha, data FROM summaries")
            found = {sha: json.loads(redact(data)) for sha, data in rows}
            if not all(isinstance(value, dict) for value in found.values()):
                raise ValueError("a summary is not a JSON object")
            return found

        return self._decoded(read)

    def summary_shas(self, path: str) -> set[str]:
        """The content hashes this path's summaries were written for (empty: never summarised)."""
        return {row[0] for row in self.db.execute("SELECT sha FROM summaries WHERE path = ?", (path,))}

    def summarised_shas(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT sha FROM summaries")}

    def put_summary(self, sha: str, path: str, data: dict[str, Any], model: str, cost: float | None) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?, ?)",
                            (sha, path, redact(json.dumps(data)), model, cost))
            self.db.execute("DELETE FROM summaries WHERE path = ? AND sha != ? AND sha NOT IN (SELECT sha FROM files)",
                            (path, sha))

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


def _check(db: sqlite3.Connection) -> None:
    """Raises when the store is not one we wrote: its image, or its tables' columns."""
    db.executescript(SCHEMA)
    result = db.execute("PRAGMA quick_check").fetchall()
    if result != [("ok",)]:
        raise _Damaged(f"quick_check: {'; '.join(str(r[0]) for r in result[:3])}")
    for table, columns in COLUMNS.items():
        found = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        if found != columns:
            raise _Damaged(f"table {table} has columns {found}, not {columns}")


def _record(row: tuple[Any, ...]) -> FileRecord:
    return FileRecord(row[0], row[1], row[2], row[3], row[4], bool(row[5]),
                      tuple(Symbol.from_json(s) for s in json.loads(row[6])), frozenset(json.loads(row[7])), row[8])


def git_blob_sha(data: bytes) -> str:
    """What `git hash-object` prints for these bytes (GitHub's tree carries the same)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()
