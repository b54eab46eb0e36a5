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
from agent.llm.reasoning import for_record
from agent.secrets import redact
from agent.session import media
from agent.session.lock import SessionLock, SessionLocked
from agent.session.shapes import take


class SessionError(Exception):
    pass


class SessionInUse(SessionError):
    """Another live process writes the session (its message names the holder)."""


@dataclass
class SessionSummary:
    id: str
    created: float
    workspace: str
    first_prompt: str
    path: Path
    root: str | None = None  # the folder on disk, for local workspaces
    conversation: bool = True  # a prompt was recorded (an empty session is never listed)
    parent: str | None = None  # a subagent's: the session that started it (agent/subagents)


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
    """Appends a session's lines to its file, as its only writer (agent/session/lock.py).

    A new session (`pending=True`) has no file until its first prompt: its lines wait in memory
    and are written, file and lock created, with the first `run_started` event or message. A
    session closed before that (an app launched and quit, `/clear` twice) leaves nothing behind.
    """

    def __init__(self, path: Path, session_id: str, *, pending: bool = False) -> None:
        self.path = path
        self.session_id = session_id
        self.lock: SessionLock | None = None
        self._fd = -1
        self._unwritten = bytearray()  # encoded lines not on the file yet (a full disk)
        self._pending: list[str] | None = [] if pending else None
        self._state = threading.Condition()  # guards the counts below
        self._written = self._synced = 0  # lines written, lines known to be on disk
        self._failure: OSError | None = None
        self._fd_lock = threading.Lock()  # an fsync never meets a closed (or reused) descriptor
        if not pending:
            self._open()

    @property
    def recorded(self) -> bool:
        """The session has a file (its first prompt came)."""
        return self._pending is None

    @property
    def failure(self) -> OSError | None:
        """Why lines could not be written (a full disk): they wait in memory, retried on each write."""
        return self._failure

    def _open(self) -> None:
        try:
            self.lock = SessionLock.acquire(self.path)
        except SessionLocked as exc:
            raise SessionInUse(str(exc)) from None
        try:
            _drop_partial_tail(self.path)
            # kept open for the session; 0600: the conversation quotes the user's files
            self._fd = paths.open_private(self.path)
        except BaseException:
            self.lock.release()
            raise

    def _write(self, kind: str, data: Any, starts: bool | None = None) -> None:
        line = json.dumps({"t": round(time.time(), 3), "kind": kind, "data": data}, ensure_ascii=False)
        if starts is None:
            starts = kind == "message" or (kind == "event" and data.get("type") == "run_started")
        self._append(redact(line), starts=starts)

    def _append(self, line: str, starts: bool = False) -> None:
        if self._pending is not None:
            self._pending.append(line)
            if not starts:
                return
            try:
                self._open()
            except OSError as exc:  # no room for the file: the lines wait, the caller stops the run
                self._failure = exc
                return
            line, self._pending = "\n".join(self._pending), None
        self._unwritten += (line + "\n").encode()
        self._flush()

    def _flush(self) -> None:
        """Write what waits; a failure (ENOSPC) keeps the rest for the next try, never raised here:
        the session stops the run before its next change (`failure`), and says why."""
        if self._fd < 0:
            return
        while self._unwritten:
            try:
                done = os.write(self._fd, self._unwritten)
            except OSError as exc:
                self._failure = exc
                return
            del self._unwritten[:done]
        self._failure = None
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
                if self._fd >= 0:
                    os.fsync(self._fd)
        except OSError as exc:  # seen by the session through `failure`
            self._failure = exc
        with self._state:
            self._synced = max(self._synced, target)
            self._state.notify_all()

    def sync(self) -> None:
        """Block until every line written so far is on disk (a failure is left in `failure`)."""
        with self._state:
            target = self._written
            if target > self._synced:
                _SYNCER.request(self)
            self._state.wait_for(lambda: self._synced >= target)

    async def durable(self) -> None:
        """`sync` without blocking the event loop."""
        with self._state:
            if self._synced >= self._written:
                return
        await asyncio.to_thread(self.sync)

    def meta(self, data: dict[str, Any]) -> None:
        self._write("meta", data)

    def message(self, message: dict[str, Any]) -> None:
        self._write("message", _kept(message, media.folder(self.path)))

    def note(self, message: dict[str, Any]) -> None:
        """A message coder-tui adds for the model: recorded, but no reason to start the file."""
        self._write("message", message, starts=False)

    def event(self, event: Any, dumped: str | None = None) -> None:
        """Record an event; `dumped` is its JSON already passed through `redact` (saves a second
        serialisation and masking of the same text). Streamed text deltas never come here:
        `AgentSession.emit` keeps them out of the record."""
        if dumped is None:
            self._write("event", event.model_dump(mode="json"))
        else:
            self._append(f'{{"t": {round(time.time(), 3)}, "kind": "event", "data": {dumped}}}',
                         starts=getattr(event, "type", None) == "run_started")

    def state(self, key: str, value: Any) -> None:
        self._write("state", {"key": key, "value": value})

    def compaction(self, summary: dict[str, Any], kept: list[dict[str, Any]]) -> None:
        """The conversation was compacted: from here on it is `summary` followed by `kept`."""
        where = media.folder(self.path)
        self._write("compaction", {"summary": summary, "kept": [_kept(m, where) for m in kept]})

    def rewind(self, messages: list[dict[str, Any]], cut: dict[str, Any]) -> None:
        """The conversation went back to before the prompt `cut`: from here on it is `messages`."""
        where = media.folder(self.path)
        self._write("rewind", {"messages": [_kept(m, where) for m in messages], "cut": _kept(cut, where)},
                    starts=False)

    def close(self) -> None:
        """Write what waits (if there is room now), release the file and its lock. Lines that
        still cannot be written stay counted in `lost` for the front end to report."""
        if self._fd < 0:
            return
        try:
            self._flush()
            self.sync()
        finally:
            with self._fd_lock:
                os.close(self._fd)
                self._fd = -1
            if self.lock is not None:
                self.lock.release()

    @property
    def lost(self) -> int:
        """Lines that could not be written (counted once the writer is closed)."""
        return self._unwritten.count(b"\n") + (len(self._pending or []) if self._failure else 0)


def _kept(message: dict[str, Any], where: Path) -> dict[str, Any]:
    """A message as the file keeps it: images beside it, and no signed thinking the mask would change
    (agent/llm/reasoning.py `for_record`)."""
    return media.recorded(for_record(message), where)


def _drop_partial_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return
        handle.truncate(data.rfind(b"\n") + 1)


def load(path: Path) -> SessionData:
    """The session in `path`; lines that are not records of the expected shape (a damaged disk, a
    hand edit, another version) are counted in `damaged_lines` and skipped, never fatal."""
    data = SessionData()
    with open(path, encoding="utf-8", errors="replace", newline="\n") as handle:  # a stray CR is no line end
        for line in handle:
            kind, payload = parse_record(line)
            if kind is None or not take(data, kind, payload):
                data.damaged_lines += 1
    data.messages = repair_messages(media.inflate(data.messages, media.folder(path)))
    data.history = repair_messages(media.inflate(data.history, media.folder(path)))
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
        writer = SessionWriter(self.directory / f"{session_id}.jsonl", session_id, pending=True)
        writer.meta({"session_id": session_id, "created": time.time(), **meta})
        return writer

    def resolve(self, ref: str, workspace: str | None = None) -> Path:
        """A session file from an id, a unique id prefix, or `last` (newest, for this workspace)."""
        sessions = self.list()
        if ref == "last":
            mine = [s for s in sessions if (workspace is None or s.workspace == workspace) and s.parent is None]
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
        """The session's writer (holding its lock: SessionInUse when another process has it) and data."""
        writer = SessionWriter(path, path.stem)
        try:
            data = load(path)
        except BaseException:
            writer.close()
            raise
        writer.session_id = str(data.meta.get("session_id") or path.stem)
        return writer, data

    def list(self) -> list[SessionSummary]:
        """The sessions with a conversation, newest first (by last write).

        Files without one (recorded before sessions waited for their first prompt) are left out:
        `last` never resumes an empty session.
        """
        if not self.directory.exists():
            return []
        files = sorted(self.directory.glob("*.jsonl"), key=_mtime, reverse=True)
        from agent.session.listing import summary_of

        return [summary for path in files if (summary := summary_of(path)) is not None and summary.conversation]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed while listing
        return 0.0


def parse_record(line: str) -> tuple[str | None, Any]:
    """A line's kind and data; (None, None) for a line that is not a record."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None, None
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str) or "data" not in record:
        return None, None
    return record["kind"], record["data"]
