"""Sessions: every run recorded as JSONL under the data dir.

Each line is written to the file at once (a crash of the process loses nothing) and fsynced by a
background thread right after (a crash of the machine loses at most the last few lines): an fsync
on the event loop for every event cost more than the rest of a loop step. A turn's end waits for
its lines to be on disk (`durable`), so a completed turn's record is never lost.

Line kinds: `meta` (first line), `message` (the conversation, OpenAI format), `event` (the event
stream, without per-token text deltas), `state` (named values a workspace needs to survive a
restart, e.g. a GitHub overlay). A file cut off mid-line by a crash loads with its complete
lines; appending to it first drops the partial tail.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent import paths
from agent.secrets import redact


class SessionError(Exception):
    pass


@dataclass
class SessionSummary:
    id: str
    created: float
    workspace: str
    first_prompt: str
    path: Path
    root: str | None = None  # the folder on disk, for local workspaces


@dataclass
class SessionData:
    meta: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    damaged_lines: int = 0
    # every message ever recorded; `messages` is what the model sees, which starts at the last
    # compaction (its summary and the turns it kept)
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def todos(self) -> list[dict[str, Any]]:
        for event in reversed(self.events):
            if event.get("type") == "plan_updated":
                return list(event.get("todos", []))
        return []


class _Syncer:
    """One daemon thread that fsyncs session files for every writer, off the event loop."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._dirty: dict[SessionWriter, None] = {}  # an ordered set
        self._thread: threading.Thread | None = None

    def request(self, writer: SessionWriter) -> None:
        with self._cond:
            self._dirty[writer] = None
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="session-fsync", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._dirty:
                    self._cond.wait()
                writer = next(iter(self._dirty))
                del self._dirty[writer]
            writer._sync_now()


_SYNCER = _Syncer()


class SessionWriter:
    def __init__(self, path: Path, session_id: str) -> None:
        self.path = path
        self.session_id = session_id
        _drop_partial_tail(path)
        # kept open for the session; 0600: the conversation quotes the user's files
        self._handle = os.fdopen(paths.open_private(path), "a", encoding="utf-8")
        self._fd = self._handle.fileno()
        self._state = threading.Condition()  # guards the counts below
        self._written = self._synced = 0  # lines written, lines known to be on disk
        self._failure: OSError | None = None
        self._fd_lock = threading.Lock()  # an fsync never meets a closed (or reused) descriptor

    def _write(self, kind: str, data: Any) -> None:
        line = json.dumps({"t": round(time.time(), 3), "kind": kind, "data": data}, ensure_ascii=False)
        self._append(redact(line))

    def _append(self, line: str) -> None:
        if self._failure is not None:
            raise self._failure
        self._handle.write(line + "\n")
        self._handle.flush()
        with self._state:
            self._written += 1
        _SYNCER.request(self)

    def _sync_now(self) -> None:
        """On the syncer thread: fsync what was written so far."""
        with self._state:
            target = self._written
            if target == self._synced:
                return
        try:
            with self._fd_lock:
                if not self._handle.closed:
                    os.fsync(self._fd)
        except OSError as exc:  # reported on the next write or sync, on the caller's thread
            self._failure = exc
        with self._state:
            self._synced = max(self._synced, target)
            self._state.notify_all()

    def sync(self) -> None:
        """Block until every line written so far is on disk."""
        with self._state:
            target = self._written
            if target > self._synced:
                _SYNCER.request(self)
            self._state.wait_for(lambda: self._synced >= target)
        if self._failure is not None:
            raise self._failure

    async def durable(self) -> None:
        """`sync` without blocking the event loop."""
        with self._state:
            if self._synced >= self._written and self._failure is None:
                return
        await asyncio.to_thread(self.sync)

    def meta(self, data: dict[str, Any]) -> None:
        self._write("meta", data)

    def message(self, message: dict[str, Any]) -> None:
        self._write("message", message)

    def event(self, event: Any, dumped: str | None = None) -> None:
        """Record an event; `dumped` is its JSON already passed through `redact` (saves a second
        serialisation and masking of the same text). Streamed text deltas never come here:
        `AgentSession.emit` keeps them out of the record."""
        if dumped is None:
            self._write("event", event.model_dump(mode="json"))
        else:
            self._append(f'{{"t": {round(time.time(), 3)}, "kind": "event", "data": {dumped}}}')

    def state(self, key: str, value: Any) -> None:
        self._write("state", {"key": key, "value": value})

    def compaction(self, summary: dict[str, Any], kept: list[dict[str, Any]]) -> None:
        """The conversation was compacted: from here on it is `summary` followed by `kept`."""
        self._write("compaction", {"summary": summary, "kept": kept})

    def close(self) -> None:
        if self._handle.closed:
            return
        try:
            self.sync()
        finally:
            with self._fd_lock:
                self._handle.close()


def _drop_partial_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return
        handle.truncate(data.rfind(b"\n") + 1)


def load(path: Path) -> SessionData:
    data = SessionData()
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                kind, payload = record["kind"], record["data"]
            except (json.JSONDecodeError, KeyError, TypeError):
                data.damaged_lines += 1
                continue
            if kind == "meta":
                data.meta.update(payload)
            elif kind == "message":
                data.messages.append(payload)
                data.history.append(payload)
            elif kind == "compaction":
                data.messages = [payload["summary"], *payload["kept"]]
            elif kind == "event":
                data.events.append(payload)
            elif kind == "state":
                data.state[payload["key"]] = payload["value"]
    data.messages = repair_messages(data.messages)
    data.history = repair_messages(data.history)
    return data


def repair_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every tool call a result, so a conversation cut off mid-step can continue."""
    repaired: list[dict[str, Any]] = []
    pending: list[str] = []
    for message in messages:
        if message.get("role") != "tool" and pending:
            repaired.extend(_interrupted(pending))
            pending = []
        if message.get("role") == "tool" and message.get("tool_call_id") in pending:
            pending.remove(message["tool_call_id"])
        repaired.append(message)
        if message.get("role") == "assistant":
            pending = [c["id"] for c in message.get("tool_calls") or []]
    repaired.extend(_interrupted(pending))
    return repaired


def _interrupted(call_ids: list[str]) -> list[dict[str, Any]]:
    return [{"role": "tool", "tool_call_id": cid,
             "content": "Not completed: the session ended before this call finished."} for cid in call_ids]


class SessionStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or paths.sessions_dir()

    def create(self, meta: dict[str, Any]) -> SessionWriter:
        paths.private_dir(self.directory)
        session_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        writer = SessionWriter(self.directory / f"{session_id}.jsonl", session_id)
        writer.meta({"session_id": session_id, "created": time.time(), **meta})
        return writer

    def resolve(self, ref: str, workspace: str | None = None) -> Path:
        """A session file from an id, a unique id prefix, or `last` (newest, for this workspace)."""
        sessions = self.list()
        if ref == "last":
            mine = [s for s in sessions if workspace is None or s.workspace == workspace]
            if not mine:
                where = f" for {workspace}" if workspace else ""
                raise SessionError(f"no session to resume{where} (see `coder-tui sessions`)")
            return mine[0].path
        matches = [s for s in sessions if s.id == ref] or [s for s in sessions if s.id.startswith(ref)]
        if not matches:
            raise SessionError(f"no session {ref!r} (see `coder-tui sessions`)")
        if len(matches) > 1:
            raise SessionError(f"session id {ref!r} is ambiguous; give more characters")
        return matches[0].path

    def reopen(self, path: Path) -> tuple[SessionWriter, SessionData]:
        data = load(path)
        session_id = data.meta.get("session_id") or path.stem
        return SessionWriter(path, session_id), data

    def list(self) -> list[SessionSummary]:
        """Newest first (by last write)."""
        if not self.directory.exists():
            return []
        files = sorted(self.directory.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [summary for path in files if (summary := _summarize(path)) is not None]


def _summarize(path: Path) -> SessionSummary | None:
    meta: dict[str, Any] = {}
    prompt = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("kind") == "meta":
                    meta.update(record.get("data", {}))
                elif record.get("kind") == "message" and record["data"].get("role") == "user":
                    prompt = str(record["data"].get("content", ""))
                    break
    except OSError:
        return None
    return SessionSummary(
        id=meta.get("session_id", path.stem), created=float(meta.get("created", path.stat().st_mtime)),
        workspace=meta.get("workspace", "?"), first_prompt=prompt, path=path, root=meta.get("root"),
    )


def summary_of(path: Path) -> SessionSummary | None:
    return _summarize(path)
