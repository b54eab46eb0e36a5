"""A session the host owns: its clients, its record of the session so far, its prompt queue.

Every event goes to every attached client and into `log` (the transcript a late joiner receives
first: the recorded events of a resumed session, then everything since, streamed text joined).
Prompts wait in `queue` and run one at a time in the session's worker task, so two clients'
turns never interleave. An approval is answered by whoever answers first (`answer`); the others
see the `approval_resolved` event followed by an `approval_answered` line saying by whom.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent import events as ev
from agent.approval import Decision
from agent.host.wire import encode, event_line
from agent.session.core import AgentSession
from agent.session.target import Target


OUTBOX_ENV = "CODER_TUI_HOST_OUTBOX"  # bytes a client may leave unread before the host drops it
OUTBOX_MAX = 16 * 1024 * 1024
OUTBOX_LINES = 64  # ...in more lines than this: one large event (a long reply whole) is never the cause
OUTBOX_LINES_ENV = "CODER_TUI_HOST_OUTBOX_LINES"  # lines a client may leave unread, however small
OUTBOX_MAX_LINES = 100_000  # (each queued line costs memory beyond its bytes)


def outbox_max() -> int:
    return _setting(OUTBOX_ENV, OUTBOX_MAX)


def outbox_max_lines() -> int:
    return max(OUTBOX_LINES, _setting(OUTBOX_LINES_ENV, OUTBOX_MAX_LINES))


def _setting(name: str, default: int) -> int:
    try:
        return max(1, int(os.environ.get(name, "")))
    except ValueError:
        return default


@dataclass(eq=False)
class Client:
    """One connection: its name as the others see it, and what is waiting to be written to it.

    What waits is bounded (`limit` bytes in `OUTBOX_LINES` lines at least, or `max_lines` lines
    however small): a client that stops reading is dropped (`on_overflow`,
    the host logs it and closes its connection) rather than held in memory without end; the
    others are never waiting on it, each has its own outbox and writer."""

    name: str
    outbox: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    live: LiveSession | None = None
    limit: int = field(default_factory=outbox_max)
    max_lines: int = field(default_factory=outbox_max_lines)
    waiting: int = 0  # bytes queued, not yet handed to the connection
    dropped: bool = False
    on_overflow: Callable[[Client], None] | None = None

    def send(self, line: bytes | None) -> None:
        if self.dropped:
            return
        if line:
            self.waiting += len(line)
            lines = self.outbox.qsize()
            if (self.waiting > self.limit and lines >= OUTBOX_LINES) or lines >= self.max_lines:
                self.dropped = True
                self.outbox.put_nowait(None)
                if self.on_overflow is not None:
                    self.on_overflow(self)
                return
        self.outbox.put_nowait(line)

    def taken(self, line: bytes) -> None:
        """`line` left the outbox for the connection."""
        self.waiting -= len(line)


@dataclass
class Turn:
    ticket: int
    text: str
    by: str


class LiveSession:
    def __init__(self, target: Target, retire: Callable[[LiveSession], None]) -> None:
        self.target = target
        self.session: AgentSession | None = None  # set by the host right after open_session
        self.clients: list[Client] = []
        self.log: list[bytes] = []
        self._text: list[str] = []  # streamed text since the transcript's last line
        self.queue: list[Turn] = []
        self.current: Turn | None = None
        self.answered_by: dict[str, str] = {}  # approval id -> the client that answered it
        self.pending: list[str] = []  # approval ids waiting, in the order they were asked
        self.resolved_by: dict[str, str] = {}  # approval id -> who answered it (for a late answer's refusal)
        self._retire = retire
        self._tickets = itertools.count(1)
        self._worker: asyncio.Task[None] | None = None

    @property
    def session_id(self) -> str:
        assert self.session is not None
        return self.session.session_id

    @property
    def running(self) -> bool:
        return self._worker is not None and not self._worker.done()

    @property
    def idle(self) -> bool:
        """Nothing runs or waits and nobody is attached: the host may close it."""
        return not self.running and not self.clients

    def restore(self, session: AgentSession) -> None:
        """The session's recorded events start the transcript (a resumed session's history)."""
        self.session = session
        if session.restored is not None:
            self.log.extend(encode(event) for event in session.restored.events)

    # -- events ---------------------------------------------------------------------------
    def sink(self, event: Any) -> None:
        if isinstance(event, ev.ApprovalRequired):
            self.pending.append(event.approval_id)
        elif isinstance(event, ev.ApprovalResolved) and event.approval_id in self.pending:
            self.pending.remove(event.approval_id)
        line = event_line(event)
        if isinstance(event, ev.TextDelta):
            self._text.append(event.text)  # joined once, when the transcript is next read or added to
        else:
            self._keep(line)
        self.broadcast(line)
        if isinstance(event, ev.ApprovalResolved) and event.approval_id in self.answered_by:
            self.resolved_by[event.approval_id] = by = self.answered_by.pop(event.approval_id)
            self.note({"type": "approval_answered", "approval_id": event.approval_id, "decision": event.decision,
                       "by": by})

    def note(self, data: dict[str, Any]) -> None:
        """A host line for every client, kept in the transcript too."""
        line = encode(data)
        self._keep(line)
        self.broadcast(line)

    def _keep(self, line: bytes) -> None:
        self._join_text()
        self.log.append(line)

    def _join_text(self) -> None:
        """Streamed text waiting to enter the transcript goes in as one text_delta (joined once: a long
        reply costs its length, not its length times its number of deltas)."""
        if self._text:
            self.log.append(event_line(ev.TextDelta(text="".join(self._text))))
            self._text = []

    def broadcast(self, line: bytes) -> None:
        for client in self.clients:
            client.send(line)

    # -- clients --------------------------------------------------------------------------
    def join(self, client: Client) -> int:
        """Attach `client`: the session so far, then the live stream (no await in between: nothing
        is missed or sent twice). Returns how many lines were replayed."""
        self._join_text()
        for line in self.log:
            client.send(line)
        client.send(encode({"type": "replay_end", "session_id": self.session_id, "pending": list(self.pending),
                            "running": self.current is not None, "queued": len(self.queue),
                            "clients": [c.name for c in self.clients]}))
        self.clients.append(client)
        client.live = self
        self.broadcast(encode({"type": "client_joined", "client": client.name}))
        return len(self.log)

    def leave(self, client: Client) -> None:
        if client in self.clients:
            self.clients.remove(client)
            self.broadcast(encode({"type": "client_left", "client": client.name}))
        client.live = None
        if self.idle:
            self._retire(self)

    # -- turns ----------------------------------------------------------------------------
    def prompt(self, text: str, by: str) -> tuple[int, int]:
        """Queue a turn; returns its ticket and how many turns run or wait before it."""
        turn = Turn(next(self._tickets), text, by)
        ahead = len(self.queue) + (self.current is not None)
        self.queue.append(turn)
        if ahead:
            self.note({"type": "prompt_queued", "ticket": turn.ticket, "by": by, "prompt": text[:200], "ahead": ahead})
        if not self.running:
            self._worker = asyncio.create_task(self._work(), name=f"host-{self.session_id}")
        return turn.ticket, ahead

    async def _work(self) -> None:
        assert self.session is not None
        while self.queue:
            self.current = turn = self.queue.pop(0)
            self.note({"type": "turn_started", "ticket": turn.ticket, "by": turn.by, "prompt": turn.text[:200]})
            done: dict[str, Any] = {"type": "turn_done", "ticket": turn.ticket, "by": turn.by}
            try:
                complete = await self.session.run(turn.text)
                done.update(success=complete.success, completion_reason=complete.completion_reason)
            except Exception as exc:  # noqa: BLE001 - one turn's failure is reported; the next turns run
                done.update(success=False, completion_reason="error", error=f"{type(exc).__name__}: {exc}")
            finally:
                self.current = None
            self.note(done)
        self._worker = None
        if self.idle:
            self._retire(self)

    def answer(self, approval_id: str | None, decision: Decision, by: str) -> str:
        """Answer a pending approval (None: the oldest); ValueError when none waits with that id."""
        assert self.session is not None
        approval_id = approval_id or (self.pending[0] if self.pending else None)
        if approval_id in self.resolved_by:
            raise ValueError(f"approval {approval_id!r} was answered already, by {self.resolved_by[approval_id]}")
        if approval_id is None or approval_id not in self.session.pending_approvals:
            raise ValueError(f"no pending approval {approval_id!r}" if approval_id else "no approval is waiting")
        if approval_id in self.answered_by:
            raise ValueError(f"approval {approval_id!r} was answered already, by {self.answered_by[approval_id]}")
        if not self.session.answer(approval_id, decision):
            raise ValueError(f"approval {approval_id!r} was answered already")
        self.answered_by[approval_id] = by
        return approval_id

    def stop(self, by: str = "the host") -> tuple[bool, list[int]]:
        """Stop the running turn and drop the prompts queued behind it (the clients are told which,
        in a `prompts_dropped` line): stop means stop, not "go on with the next one". Returns whether
        a turn was stopped and the dropped tickets."""
        dropped, self.queue = self.queue, []
        if dropped:
            self.note({"type": "prompts_dropped", "by": by, "tickets": [turn.ticket for turn in dropped],
                       "prompts": [{"ticket": turn.ticket, "by": turn.by, "prompt": turn.text[:200]}
                                   for turn in dropped]})
        return self.session is not None and self.session.stop(), [turn.ticket for turn in dropped]

    def set_mode(self, mode: str, by: str) -> None:
        """The approval mode a client asked for, for every turn from now on (the others are told)."""
        assert self.session is not None
        if mode != self.session.mode:
            self.session.mode = mode  # type: ignore[assignment] - checked by SessionOptions
            self.note({"type": "mode_changed", "mode": mode, "by": by})

    async def close(self) -> None:
        if self._worker is not None and not self._worker.done():
            self.stop()
            await asyncio.wait({self._worker}, timeout=30)
        for client in list(self.clients):
            client.live = None
        self.clients.clear()
        if self.session is not None:
            await self.session.close()
        await self.target.close()
