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
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent import events as ev
from agent.approval import Decision
from agent.client.commands import Answer, Note, Prompt, Reply, SetMode, SetProfile, Stop
from agent.client.hosted import HostedHandle, HostRefused, HostUnavailable, live_sessions, open_in_host

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
    """serve's face of a `HostedHandle` (agent/client/hosted.py): the handle replays, follows and
    knows who answered first; this only routes its items to serve's sinks."""

    def __init__(self, handle: HostedHandle, workspace: HostedWorkspace) -> None:
        self.handle, self.workspace = handle, workspace
        self.session_id: str = handle.session_id
        self.model: str | None = handle.model
        self.restored = Restored([item_data(item) for item in handle.history()])
        self.plan_reviewer = NoPlanReview()
        self.sink: Any = None  # serve's Live.sink: this session's own turns
        self.others: Any = None  # serve's follow log: every other event
        self.lost: Any = None  # called once the host's connection is gone (serve forgets the session)
        self._mine = False
        self._turn: asyncio.Task[Reply] | None = None
        self._complete: ev.Complete | None = None
        handle.listen(self._item)
        self._watching = asyncio.get_running_loop().create_task(self._watch(), name=f"serve-hosted-{self.session_id}")

    @property
    def mode(self) -> str:
        return self.handle.mode

    @property
    def pending_approvals(self) -> list[str]:
        return self.handle.pending

    # -- a turn -----------------------------------------------------------------------------
    async def run(self, prompt: str) -> ev.Complete:
        self._complete = None
        self._turn = asyncio.ensure_future(self.handle.submit(Prompt(prompt)))
        try:
            reply = await self._turn
        finally:
            self._turn, self._mine = None, False
        if not reply.ok:
            raise ConnectionError(reply.error) if reply.kind == "unavailable" else RuntimeError(reply.error)
        return self._complete or ev.Complete(success=bool(reply.data.get("success")), iterations=0,
                                             final_response="",
                                             completion_reason=reply.data.get("completion_reason") or "error")

    def stop(self) -> bool:
        if self._turn is None or self._turn.done():
            return False
        asyncio.ensure_future(self.handle.submit(Stop()))
        return True

    async def answer_in_host(self, approval_id: str, decision: Decision) -> Reply:
        return await self.handle.submit(Answer(approval_id, decision.decision, decision.feedback,
                                               decision.rejected_hunks, decision.edited))

    async def configure(self, mode: str | None, profile: str | None) -> Reply | None:
        """The turn's settings, applied in the host before its prompt (the refusal, if any)."""
        for command in ((SetProfile(profile),) if profile else ()) + ((SetMode(mode),) if mode else ()):  # type: ignore[arg-type]
            reply = await self.handle.submit(command)
            if not reply.ok:
                return reply
        return None

    # -- the handle's items -------------------------------------------------------------------
    def _item(self, item: object) -> None:
        if isinstance(item, Note):
            if item.type == "turn_started":
                self._mine = self._turn is not None and item.data.get("by") == self.handle.name
            return
        if isinstance(item, ev.Complete) and self._mine:
            self._complete = item
        target = self.sink if self._mine else self.others
        if target is not None:
            target(item)

    async def _watch(self) -> None:
        await self.handle.lost.wait()
        if self.lost is not None:
            self.lost()

    async def close(self) -> None:
        self._watching.cancel()
        await self.handle.close(detach=True)


def item_data(item: object) -> Data:
    """A handle's item in the `run --json` shapes (a host line as the host sent it)."""
    return dict(item.data) if isinstance(item, Note) else item.model_dump(mode="json")  # type: ignore[attr-defined]


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
        self._names += 1
        try:
            handle = await open_in_host(session_id or "new", f"serve (pid {os.getpid()}) #{self._names}", self.options)
        except HostUnavailable as exc:
            self.usable = False
            print(f"coder-tui serve: the session host is not available ({exc}); sessions run in this process",
                  file=sys.stderr, flush=True)
            return None
        return HostedSession(handle, HostedWorkspace(self.root, self.label))

    async def answer_elsewhere(self, approval_id: str, decision: Decision) -> str | None:
        """Answer an approval of a session of serve's folder that another front end runs in the
        host (`run --attach`, the app): its session id, or None when no such approval waits there.
        Busy when another front end answered first."""
        from agent.frontends.serve.sessions import Busy, NotFound

        row = next((row for row in await self.listing()
                    if approval_id in (*row.get("pending_approvals", []), *row.get("answered_approvals", []))), None)
        if row is None:
            return None
        try:
            handle = await open_in_host(row["session_id"], f"serve view (pid {os.getpid()})", live_only=True,
                                        start=False)
        except (HostUnavailable, HostRefused, ConnectionError, TimeoutError):
            return None  # it ended meanwhile
        try:
            reply = await handle.submit(Answer(approval_id, decision.decision, decision.feedback))
        finally:
            await handle.close(detach=True)
        if not reply.ok:
            raise (Busy if reply.kind == "conflict" else NotFound)(str(reply.error))
        return str(row["session_id"])

    async def listing(self) -> list[Data]:
        """The host's live sessions of serve's folder, with who is attached (empty when none runs)."""
        rows = await live_sessions() or []
        return [{**row, "live": True} for row in rows if row.get("workspace") == self.label]


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
    session.sink = live.sink

    def others(event: Any) -> None:  # another front end's turn: followed, and its approvals answerable here
        if isinstance(event, ev.ApprovalRequired):
            live.asked.add(event.approval_id)
        live.events.add(event)

    session.others = others
    for data in session.restored.events:
        if data.get("type") == "approval_required":
            live.asked.add(str(data.get("approval_id")))

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
                     "prompt": row.get("prompt", ""),
                     "pending_approvals": [{"type": "approval_required", "id": approval} for approval in row["pending_approvals"]]})
    return rows
