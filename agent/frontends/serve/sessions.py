"""The SSE server's live sessions: open or continue one per chat, run a turn, answer approvals.

Each conversation is a `SessionHandle` (agent/client) of its own, driven by serve's one driver
(agent/frontends/serve/driver.py `Live`): a session in the session host when one can be used (so the
sessions serve opens are the ones `coder-tui sessions` lists and `run --attach ID` joins), in this
process otherwise (`LocalHandle`: `--no-host`, `--github`, a chat that brings earlier messages or the
client's buffers, a plan review). A turn runs in a task owned here; whoever started it (the HTTP
handler) receives the turn's SSE data through a listener and must call `finish`, which stops the
run if it is still going and waits for it: no run outlives its request. A streamed turn is the
exception: its frames are numbered and kept (agent/frontends/serve/resume.py), and a client that
leaves `detach`es: the run goes on for the grace period, for the client to come back with
`Last-Event-ID`, and is stopped (`finish`) when nobody did.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.approval import Decision
from agent.client.commands import Answer, Command, Reply, SetMode, SetProfile
from agent.client.commands import PlanDecision as PlanCommand
from agent.client.handle import SessionHandle
from agent.config import Config
from agent.frontends.serve.driver import Data, Live
from agent.frontends.serve.request import BadRequest, ChatRequest
from agent.frontends.serve.resume import GRACE
from agent.planning.review import PlanDecision
from agent.session.record import SessionError, SessionInUse, SessionStore
from agent.session.target import Target, TargetError
from agent.workspaces.base import WorkspaceError
from agent.workspaces.overlay import OverlayWorkspace

Opener = Callable[[], Awaitable[Target]]  # a fresh target (workspace, tools) for each session
STOP_WAIT = 30.0  # seconds a stopped run may take to unwind (a tool's thread finishing its write)
MAX_LIVE = 64  # idle sessions kept open beyond this are closed, oldest first (their record can resume them)
LOCAL_NAME = "serve"  # how the clients of a session in this process see serve


class NotFound(Exception):
    """An unknown session or approval id (404)."""


class Busy(Exception):
    """The session already runs a turn (409)."""


class Unavailable(Exception):
    """The target could not be opened for a new session (503)."""


@dataclass
class InHost:
    """serve's sessions in the session host: the options they open with, serve's folder."""

    options: dict[str, Any]
    root: Path
    label: str
    usable: bool = True
    opened: int = 0

    def fits(self, chat: ChatRequest, config: Config) -> bool:
        """Through the host, unless the chat needs this process: a plan review may be asked (auto or
        structured workflow, ask mode), an overlay of the client's buffers, earlier messages."""
        reviews = config.workflow != "direct" and config.mode == "ask"
        return self.usable and chat.apply != "client" and not chat.history and not reviews

    async def open(self, resume: str | None) -> SessionHandle | None:
        """The session opened (or joined) in the host; None when no host can be used (said once).
        Busy, NotFound, Unavailable: the host's refusal."""
        from agent.client.connect import join_in_host
        from agent.client.hosted import HostRefused, HostUnavailable

        self.opened += 1
        try:
            return await join_in_host(resume or "new", f"serve (pid {os.getpid()}) #{self.opened}", self.options)
        except HostUnavailable as exc:
            self.usable = False
            print(f"coder-tui serve: the session host is not available ({exc}); sessions run in this process",
                  file=sys.stderr, flush=True)
            return None
        except HostRefused as exc:  # 409 in use; 404 a recorded session gone meanwhile; else 503 and why
            message = str(exc)
            if "in use" in message or "another process" in message:
                raise Busy(message) from None
            raise (NotFound if resume and message.startswith("no session") else Unavailable)(message) from None
        except (ConnectionError, TimeoutError) as exc:
            raise Unavailable(f"the session host did not answer: {exc}") from None

    async def answer(self, approval_id: str, decision: Decision) -> str | None:
        """Answer an approval of a session of serve's folder that another front end runs in the host
        (`run --attach`, the app): its session id; None when no such approval waits there."""
        from agent.client.connect import join_in_host, live_in_host
        from agent.client.hosted import HostRefused, HostUnavailable

        row = next((row for row in await live_in_host(self.label)
                    if approval_id in (*row.get("pending_approvals", []), *row.get("answered_approvals", []))), None)  # type: ignore[misc]
        if row is None:
            return None
        try:
            handle = await join_in_host(str(row["session_id"]), f"serve view (pid {os.getpid()})", live_only=True,
                                        start=False)
        except (HostUnavailable, HostRefused, ConnectionError, TimeoutError):
            return None  # it ended meanwhile
        try:
            refused(await handle.submit(Answer(approval_id, decision.decision, decision.feedback)))
        finally:
            await handle.close(detach=True)
        return str(row["session_id"])


def refused(reply: Reply) -> Reply:
    """The reply, when the handle did what was asked; else Busy (a conflict) or NotFound."""
    if not reply.ok:
        raise (Busy if reply.kind == "conflict" else NotFound)(str(reply.error))
    return reply


class Sessions:
    def __init__(self, config: Config, opener: Opener, store: SessionStore | None = None,
                 max_live: int = MAX_LIVE, ready: Callable[[], Awaitable[None]] | None = None,
                 grace: float = GRACE, host: InHost | None = None) -> None:
        self.config = config
        self.host = host  # sessions opened in the session host (None: all in this process)
        self.grace = grace  # seconds a streamed turn goes on with no client connected
        self.ready = ready  # the model layer loaded (agent/frontends/serve/ready.py); turns wait for it
        self.opener = opener
        self.store = store or SessionStore()
        self.max_live = max_live
        self.live: dict[str, Live] = {}

    async def open(self, chat: ChatRequest, session_id: str | None) -> Live:
        """The chat's session: the live one it names, a recorded one resumed, or a new one."""
        if session_id is None:
            return await self._create(chat, None)
        found = self.live.get(session_id)
        if found is None:
            session_id = self._recorded(session_id)
            found = self.live.get(session_id)
        live = found if found is not None else await self._create(chat, session_id)
        if live.running:
            raise Busy(f"session {session_id} is answering another request; wait for its done event "
                       f"(a client whose stream dropped continues it by sending Last-Event-ID)")
        if live.apply != chat.apply:
            raise BadRequest(f"session {session_id} was opened with apply {live.apply!r}; "
                             f"a conversation keeps where its edits are applied")
        if live.overlay is not None:
            for path, text in chat.files().items():
                _seed(live.overlay, path, text)
        return live

    def _recorded(self, session_id: str) -> str:
        """The full id of the recorded session of this server's own folder (or repository) that an
        id, or a prefix unique among that folder's sessions, names. Sessions of other folders are
        not this server's to resume: a client that guesses their ids learns nothing."""
        mine = [s for s in self.store.list() if s.workspace == self.opener.label]
        matches = [s for s in mine if s.id == session_id] or [s for s in mine if s.id.startswith(session_id)]
        if len(matches) != 1:
            why = "is ambiguous; give more characters" if matches else f"is not a session of {self.opener.label}"
            raise NotFound(f"session id {session_id!r} {why}")
        return matches[0].id

    async def _create(self, chat: ChatRequest, resume: str | None) -> Live:
        await self._make_room()
        live = None
        if self.host is not None and self.host.fits(chat, self.config):
            handle = await self.host.open(resume)
            if handle is not None:  # the host's model layer runs it: no wait for this process's
                live = self._hosted(handle, chat)
        if live is None:
            live = await self._create_here(chat, resume)
        self.live[live.session_id] = live
        return live

    def _hosted(self, handle: SessionHandle, chat: ChatRequest) -> Live:
        assert self.host is not None
        live = Live(handle, chat.apply, self.host.label, self.host.root)
        live.lost = lambda: self._forget(live)
        return live

    def _forget(self, live: Live) -> None:
        """The host went away: the next message reopens the session (the host restarted on demand)."""
        if self.live.get(live.session_id) is live:
            del self.live[live.session_id]
            live.events.close()

    async def _create_here(self, chat: ChatRequest, resume: str | None) -> Live:
        from agent.client.local import LocalHandle

        if self.ready is not None:
            await self.ready()
        try:
            target = await self.opener()
        except TargetError as exc:
            raise Unavailable(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None
        overlay = None
        try:
            if chat.apply == "client":
                overlay = OverlayWorkspace(target.workspace)
                for path, text in chat.files().items():
                    _seed(overlay, path, text)
            handle = LocalHandle.open(target, self.config.model_copy(), name=LOCAL_NAME, resume=resume,
                                      store=self.store, meta={"frontend": "serve"},
                                      workspace=overlay or target.workspace)
        except SessionInUse as exc:  # another process writes it: 409, naming the holder
            await target.close()
            raise Busy(str(exc)) from None
        except SessionError as exc:
            await target.close()
            raise NotFound(str(exc)) from None
        except BaseException:
            await target.close()
            raise
        handle.publish = True
        if resume is None:  # a new session takes the earlier messages of the request
            handle.add_history(chat.history)
        root = target.workspace.root if overlay is None else None
        return Live(handle, chat.apply, (overlay or target.workspace).label, Path(root) if root is not None else None,
                    overlay)

    async def _make_room(self) -> None:
        """Close the oldest idle sessions so that a new one keeps the live ones within `max_live`."""
        idle = sorted((live for live in self.live.values() if not live.running), key=lambda live: live.created)
        for live in idle[: max(0, len(self.live) + 1 - self.max_live)]:
            await self._close(live)

    async def _close(self, live: Live) -> None:
        self.live.pop(live.session_id, None)
        await self.finish(live)
        await live.close()

    def start(self, live: Live, chat: ChatRequest, listener: Callable[[Data], None]) -> asyncio.Task[Any]:
        """Run one turn; the listener receives its SSE data until the turn ends."""
        prompt, live.prompt, live.listener = chat.prompt(), chat.messages[-1].content, listener
        live.begin(chat)
        live.task = asyncio.create_task(live.turn(prompt), name=f"serve-{live.session_id}")
        return live.task

    def attach(self, live: Live) -> None:
        """A stream of the turn is connected: nobody's grace period runs."""
        live.attached += 1
        if live.expiry is not None:
            live.expiry.cancel()
            live.expiry = None

    def detach(self, live: Live) -> None:
        """A stream of the turn is gone; when it was the last, the turn goes on for the grace period."""
        live.attached -= 1
        if live.attached > 0 or not live.running:
            return
        task = live.task
        if self.grace <= 0:
            asyncio.ensure_future(self._expire(live, task))
            return
        live.expiry = asyncio.get_running_loop().call_later(
            self.grace, lambda: asyncio.ensure_future(self._expire(live, task)))

    async def _expire(self, live: Live, task: asyncio.Task[Any] | None) -> None:
        live.expiry = None
        if live.attached == 0 and live.task is task:
            await self.finish(live)

    def resume(self, session_id: str | None, last_id: int) -> Live:
        """The live session whose latest streamed turn a reconnecting client continues after `last_id`."""
        if not session_id:
            raise BadRequest("Last-Event-ID needs the session it belongs to: send the X-Session-Id the "
                             "stream's response carried (or session_id in the body)")
        live = self.live.get(session_id)
        if live is None:
            raise NotFound(f"no live session {session_id!r} to continue: its turn was stopped or the server "
                           f"restarted (send the message again without Last-Event-ID to continue its record)")
        problem = live.frames.check(last_id)
        if problem:
            raise Busy(problem)
        return live

    async def finish(self, live: Live) -> None:
        """Stop the turn if it still runs (its client is gone) and wait until it has ended."""
        task = live.task
        if live.expiry is not None:
            live.expiry.cancel()
            live.expiry = None
        try:
            if task is not None and not task.done():
                await live.stop()
                await asyncio.wait({task}, timeout=STOP_WAIT)
        finally:
            live.listener = None
            live.pending.clear()  # a stopped run's approvals were never resolved: nobody can answer them now

    async def answer_first(self, approval_id: str, decision: Decision) -> str:
        """Answer an approval of a session of this server, or of one another front end runs in the
        session host (`run --attach`, the app); its session id. The first answer wins: a late one is
        Busy (409) naming who answered, an unknown id NotFound (404)."""
        answer = Answer(approval_id, decision.decision, decision.feedback, decision.rejected_hunks, decision.edited)
        for live in self.live.values():
            if approval_id in live.asked:
                refused(await live.handle.submit(answer))
                return live.session_id
        found = await self.host.answer(approval_id, decision) if self.host is not None else None
        if found is None:
            raise NotFound(f"no pending approval {approval_id!r}")
        return found

    async def configure(self, live: Live, mode: str | None, profile: str | None) -> None:
        """A turn's settings (a client's `mode`/`edit_mode`, `agent_id`/`profile`), applied to the
        session before its prompt, wherever it runs: BadRequest when one cannot be."""
        commands: list[Command] = [SetProfile(profile)] if profile else []
        if mode:
            commands.append(SetMode(mode))  # type: ignore[arg-type]  # an unknown mode: the handle refuses it
        for command in commands:
            reply = await live.handle.submit(command)
            if not reply.ok:
                raise BadRequest(str(reply.error))

    async def decide_plan(self, session_id: str, decision: PlanDecision) -> None:
        """Answer the plan review (or failed step) the session's run waits for."""
        live = self.live.get(session_id)
        if live is None:
            raise NotFound(f"no live session {session_id!r}")
        if not live.running:
            raise Busy(f"session {session_id} waits for no plan decision")
        steps = [step.model_dump() for step in decision.steps] if decision.steps is not None else None
        reply = await live.handle.submit(PlanCommand(decision.decision, steps, decision.feedback))
        if not reply.ok:
            raise (Busy if reply.kind == "conflict" else BadRequest)(str(reply.error))

    def find(self, session_id: str) -> Live:
        """The live session an id (or a prefix unique among the live ones) names; NotFound otherwise."""
        matches = [live for sid, live in self.live.items() if sid == session_id] or \
                  [live for sid, live in self.live.items() if sid.startswith(session_id)]
        if len(matches) != 1:
            raise NotFound(f"no live session {session_id!r}" if not matches else
                           f"session id {session_id!r} is ambiguous; give more characters")
        return matches[0]

    async def listing(self) -> list[Data]:
        """GET /api/sessions: serve's sessions, and those live in the host of serve's folder (`live`,
        who is `attached`)."""
        rows = [live.summary() for live in sorted(self.live.values(), key=lambda item: item.created)]
        if self.host is None:
            return rows
        from agent.client.connect import live_in_host

        hosted = {row["session_id"]: row for row in await live_in_host(self.host.label)}
        for row in rows:
            found = hosted.pop(row["session_id"], None)
            row.update(live=found is not None, attached=found["clients"] if found else [])
        for row in hosted.values():  # live in the host, opened by another front end
            rows.append({"session_id": row["session_id"], "running": row["running"], "mode": row["mode"],
                         "workspace": row["workspace"], "live": True, "attached": row["clients"],
                         "prompt": row.get("prompt", ""),
                         "pending_approvals": [{"type": "approval_required", "id": approval}
                                               for approval in row["pending_approvals"]]})
        return rows

    async def close(self) -> None:
        for live in list(self.live.values()):
            await self._close(live)


def _seed(overlay: OverlayWorkspace, path: str, text: str) -> None:
    try:
        overlay.seed(path, text)
    except WorkspaceError as exc:
        raise BadRequest(f"context file {path!r}: {exc}") from None
