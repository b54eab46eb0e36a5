"""serve's sessions live in the session host (agent/host): `serve` is one more front door of it, so
the sessions it opens are the ones `coder-tui sessions` lists and `run --attach ID` joins.

`HostedSession` stands where serve's `Live` holds an `AgentSession`: its own connection to the host,
attached to one session there. `run(prompt)` queues the prompt in the host and feeds the turn's
events (the `run --json` shapes, parsed back into events) to the same sink an in-process session
feeds, so the SSE and seed shapes, frame ids and `Last-Event-ID` resumption are serve's as before.
Events of turns other front ends run go to the session's follow log only. Approvals are answered in
the host (first answer wins), stop stops the host's run.

`Hub` decides per chat: through the host when one can be used (started on demand, like `run
--attach`) and the chat needs nothing the host's protocol lacks; in this process otherwise (said
once, on serve's stderr). Kept in-process: `apply: "client"` (an overlay of the client's buffers),
`--github` targets (serve publishes their commits), chats that bring earlier messages (`history`),
plan reviews (auto or structured workflow in ask mode: the protocol has no plan decision yet).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent import events as ev
from agent.approval import Decision
from agent.host.client import HostClient, HostRefused, HostUnavailable

Data = dict[str, Any]


@dataclass
class HostedWorkspace:
    """What serve reads of a hosted session's workspace: its folder and label."""

    root: Path
    label: str


class Restored:
    """The session so far, as the host replayed it (for serve's follow log)."""

    def __init__(self, events: list[Data]) -> None:
        self.events = events


class NoPlanReview:
    waiting = None


class NoTarget:
    async def close(self) -> None:
        return None


class HostedSession:
    def __init__(self, client: HostClient, name: str, opened: Data, workspace: HostedWorkspace,
                 replay: list[Data], pending: list[str]) -> None:
        self.client, self.name, self.workspace = client, name, workspace
        self.session_id: str = opened["session_id"]
        self.mode: str = opened["mode"]
        self.model: str | None = opened.get("model")
        self.restored = Restored(replay)
        self.plan_reviewer = NoPlanReview()
        self.pending_approvals: dict[str, None] = dict.fromkeys(pending)
        self.answered: dict[str, str] = {}  # approval id -> the front end that answered it in the host
        # Resolved in the host; who answered comes on the next line (approval_answered), which a
        # late answer can overtake: serve then asks the host, which knows.
        self.resolved: set[str] = set()
        self.sink: Any = None  # serve's Live.sink: this session's own turns
        self.others: Any = None  # serve's follow log: every other event
        self.lost: Any = None  # called once the host's connection is gone (serve forgets the session)
        self._mine = False
        self._ticket: int | None = None
        self._turn: asyncio.Future[ev.Complete] | None = None
        self._complete: ev.Complete | None = None
        self._reading = asyncio.create_task(self._read(), name=f"serve-hosted-{self.session_id}")

    # -- a turn -----------------------------------------------------------------------------
    async def run(self, prompt: str) -> ev.Complete:
        self._turn = asyncio.get_running_loop().create_future()
        self._complete = None
        try:
            self._ticket = (await self.client.request("prompt", text=prompt))["ticket"]
            return await self._turn
        finally:
            self._turn, self._ticket = None, None

    def stop(self) -> bool:
        if self._turn is None or self._turn.done():
            return False
        self._spawn(self.client.request("stop"))
        return True

    def answer(self, approval_id: str, decision: Decision) -> bool:
        """Answered in the host (no wait); `answer_in_host` waits for whether it was first."""
        if approval_id not in self.pending_approvals:
            return False
        self._spawn(self.answer_in_host(approval_id, decision))
        return True

    async def answer_in_host(self, approval_id: str, decision: Decision) -> str | None:
        """None when the host took the answer; else why not (another front end answered first...)."""
        try:
            await self.client.request("approve", approval_id=approval_id, decision=decision.decision,
                                      feedback=decision.feedback)
        except (HostRefused, ConnectionError) as exc:
            return str(exc)
        return None

    # -- the host's lines -------------------------------------------------------------------
    async def _read(self) -> None:
        while (line := await self.client.lines.get()) is not None:
            self._line(line)
        if self._turn is not None and not self._turn.done():
            self._turn.set_exception(ConnectionError(
                f"the session host stopped (connection lost); session {self.session_id} is recorded up to its "
                f"last event: send the next message with its session_id to continue it"))
        if self.lost is not None:
            self.lost()

    def _line(self, line: Data) -> None:
        kind = line.get("type")
        if kind == "turn_started":
            self._mine = line.get("ticket") == self._ticket or (self._ticket is None and line.get("by") == self.name
                                                                 and self._turn is not None)
        elif kind == "turn_done" and self._mine:
            self._mine = False
            self._finish(line)
        elif kind == "prompts_dropped" and self._ticket in line.get("tickets", []):
            self._finish({"success": False, "completion_reason": "stopped"})
        elif kind == "approval_required":
            self.pending_approvals[str(line.get("approval_id"))] = None
        elif kind == "approval_resolved":
            self.pending_approvals.pop(str(line.get("approval_id")), None)
            self.resolved.add(str(line.get("approval_id")))
        elif kind == "approval_answered":
            self.answered[str(line.get("approval_id"))] = str(line.get("by"))
        try:
            event = ev.parse_event(line)
        except ValidationError:
            return  # a host line (who joined, whose turn...)
        if isinstance(event, ev.Complete) and self._mine:
            self._complete = event
        target = self.sink if self._mine else self.others
        if target is not None:
            target(event)

    def _finish(self, done: Data) -> None:
        if self._turn is None or self._turn.done():
            return
        complete = self._complete or ev.Complete(success=bool(done.get("success")), iterations=0, final_response="",
                                                 completion_reason=done.get("completion_reason") or "error")
        self._turn.set_result(complete)

    def _spawn(self, work: Any) -> None:
        async def quietly() -> None:
            with contextlib.suppress(HostRefused, ConnectionError):
                await work
        asyncio.get_running_loop().create_task(quietly())

    async def close(self) -> None:
        with contextlib.suppress(HostRefused, ConnectionError):
            await asyncio.wait_for(self.client.request("detach"), 10)
        await self.client.close()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading


class Hub:
    """Whether (and how) serve opens its sessions in the session host."""

    def __init__(self, options: dict[str, Any], root: Path, label: str) -> None:
        self.options = options  # the session options the host opens serve's sessions with
        self.root, self.label = root, label
        self.usable = True
        self._names = 0

    def fits(self, chat: Any, config: Any) -> bool:
        """Through the host, unless the chat needs what its protocol lacks: a plan review may be asked
        (auto or structured workflow, ask mode), an overlay of the client's buffers, earlier messages."""
        reviews = config.workflow != "direct" and config.mode == "ask"
        return self.usable and chat.apply != "client" and not chat.history and not reviews

    async def open(self, session_id: str | None) -> HostedSession | None:
        """The session opened (or joined) in the host; None when no host can be used (said once)."""
        try:
            client = await HostClient.connect_or_start()
        except HostUnavailable as exc:
            self.usable = False
            print(f"coder-tui serve: the session host is not available ({exc}); sessions run in this process",
                  file=sys.stderr, flush=True)
            return None
        self._names += 1
        name = f"serve (pid {os.getpid()}) #{self._names}"
        try:
            opened = await client.request("open", session=session_id or "new", client=name, options=self.options)
            replay, pending = await _replay(client)
        except BaseException:
            await client.close()
            raise
        return HostedSession(client, name, opened, HostedWorkspace(self.root, self.label), replay, pending)

    async def listing(self) -> list[Data]:
        """The host's live sessions of serve's folder, with who is attached (empty when none runs)."""
        from agent.host.client import live_sessions

        rows = await live_sessions() or []
        return [{**row, "live": True} for row in rows if row.get("workspace") == self.label]


async def _replay(client: HostClient, timeout: float = 60) -> tuple[list[Data], list[str]]:
    """The session so far, up to the host's replay_end (its pending approvals)."""
    replay: list[Data] = []
    deadline = time.monotonic() + timeout
    while True:
        line = await asyncio.wait_for(client.lines.get(), max(0.1, deadline - time.monotonic()))
        if line is None:
            raise ConnectionError("the session host closed the connection during the replay")
        if line.get("type") == "replay_end":
            return replay, list(line.get("pending", []))
        replay.append(line)


async def open_hosted(sessions: Any, chat: Any, resume: str | None) -> Any:
    """serve's Live of a session opened (or joined) in the host; None: in this process after all."""
    from agent.frontends.serve.sessions import Busy, Live, NotFound, Unavailable

    try:
        session = await sessions.hub.open(resume)
    except HostRefused as exc:  # 409 in use; 404 a recorded session gone meanwhile; else 503 and why
        message = str(exc)
        if "in use" in message or "another process" in message:
            raise Busy(message) from None
        raise (NotFound if resume and message.startswith("no session") else Unavailable)(message) from None
    except (ConnectionError, TimeoutError) as exc:
        raise Unavailable(f"the session host did not answer: {exc}") from None
    if session is None:
        return None
    live = Live(session, chat.apply, NoTarget())  # type: ignore[arg-type] - an AgentSession's face
    session.sink, session.others = live.sink, live.events.add

    def lost() -> None:  # the next message reopens it (the host restarted on demand, the session resumed)
        if sessions.live.get(session.session_id) is live:
            del sessions.live[session.session_id]
            live.events.close()

    session.lost = lost
    sessions.live[session.session_id] = live
    return live


async def listing(sessions: Any) -> list[Data]:
    """GET /api/sessions: serve's sessions, and those live in the host of serve's folder (`live`, who
    is `attached`)."""
    rows = sessions.listing()
    if sessions.hub is None:
        return rows
    hosted = {row["session_id"]: row for row in await sessions.hub.listing()}
    for row in rows:
        found = hosted.pop(row["session_id"], None)
        row.update(live=found is not None, attached=found["clients"] if found else [])
    for row in hosted.values():  # live in the host, opened by another front end
        rows.append({"session_id": row["session_id"], "running": row["running"], "mode": row["mode"],
                     "workspace": row["workspace"], "live": True, "attached": row["clients"],
                     "pending_approvals": [{"type": "approval_required", "id": approval} for approval in row["pending_approvals"]]})
    return rows
