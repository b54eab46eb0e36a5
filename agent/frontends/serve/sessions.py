"""The SSE server's live sessions: open or continue one per chat, run a turn, answer approvals.

Each conversation is an `AgentSession` of its own (its own workspace object, approver and
record), so several chats run at once. A turn runs in a task owned here; whoever started it
(the HTTP handler) receives the turn's SSE data through a listener and must call `finish`,
which stops the run if it is still going and waits for it: no run outlives its request. A
streamed turn is the exception: its frames are numbered and kept (agent/frontends/serve/resume.py),
and a client that leaves `detach`es: the run goes on for the grace period, for the client to come
back with `Last-Event-ID`, and is stopped (`finish`) when nobody did.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent import events as ev
from agent.approval import Decision, QueueApprover
from agent.config import Config
from agent.consumer import EventHandler
from agent.frontends.seedevents import SeedMapper
from agent.frontends.serve.events import Data, SseMapper, approval_data
from agent.frontends.serve.follow import EventLog
from agent.frontends.serve.request import BadRequest, ChatRequest
from agent.frontends.serve.resume import GRACE, TurnFrames
from agent.planning.review import PlanDecision
from agent.planning.seedtypes import seed_task_type
from agent.session.ports import SessionPorts
from agent.session.record import SessionError, SessionInUse, SessionStore
from agent.session.target import Target, TargetError
from agent.workspaces.base import Workspace, WorkspaceError
from agent.workspaces.overlay import OverlayWorkspace

if TYPE_CHECKING:  # the agent core is imported when a session opens in this process (not for the session host's)
    from agent.session.core import AgentSession

Opener = Callable[[], Awaitable[Target]]  # a fresh target (workspace, tools) for each session
STOP_WAIT = 30.0  # seconds a stopped run may take to unwind (a tool's thread finishing its write)
MAX_LIVE = 64  # idle sessions kept open beyond this are closed, oldest first (their record can resume them)


class NotFound(Exception):
    """An unknown session or approval id (404)."""


class Busy(Exception):
    """The session already runs a turn (409)."""


class Unavailable(Exception):
    """The target could not be opened for a new session (503)."""


@dataclass
class Live:
    session: AgentSession
    apply: str
    target: Target
    created: float = field(default_factory=time.time)
    prompt: str = ""
    pending: dict[str, Data] = field(default_factory=dict)  # approval id -> its event data
    asked: set[str] = field(default_factory=set)  # every approval id the session asked (any front end's turn)
    answered: dict[str, str] = field(default_factory=dict)  # approval id -> who answered it here
    listener: Callable[[Data], None] | None = None
    task: asyncio.Task[Any] | None = None
    events: EventLog = field(default_factory=EventLog)  # for GET /api/sessions/{id}/events
    frames: TurnFrames = field(default_factory=TurnFrames)  # the latest streamed turn, numbered
    attached: int = 0  # streams of the running turn now connected
    expiry: asyncio.TimerHandle | None = None  # stops a turn nobody came back to

    def __post_init__(self) -> None:
        self._mapper: EventHandler = SseMapper(self._send, self._newline)
        if self.session.restored is not None:
            self.events = EventLog(self.session.restored.events)

    def begin(self, chat: ChatRequest) -> None:
        """A turn starts: its events in the shapes the request asked for; seed 002's classification
        (its task types, by rule) first."""
        category = seed_task_type(chat.messages[-1].content)
        if chat.events == "seed":
            self._mapper = SeedMapper(self._send)
            return
        self._mapper = SseMapper(self._send, self._newline, category)
        self._send({"type": "classification", "task_type": category})

    def _newline(self, path: str) -> str:
        """The line end of a file the session wrote in its folder ("\n" for the editor's buffers)."""
        root = self.session.workspace.root if self.overlay is None else None
        try:
            data = (root / path).read_bytes()[:65536] if root is not None else b""
        except OSError:
            return "\n"
        return "\r\n" if data.count(b"\r\n") * 2 > data.count(b"\n") else "\n"

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def overlay(self) -> OverlayWorkspace | None:
        workspace = self.session.workspace
        return workspace if isinstance(workspace, OverlayWorkspace) else None

    def sink(self, event: Any) -> None:
        if isinstance(event, ev.ApprovalRequired):
            self.asked.add(event.approval_id)
            self.pending[event.approval_id] = approval_data(event)
        elif isinstance(event, ev.ApprovalResolved):
            self.pending.pop(event.approval_id, None)
        self.events.add(event)
        self._mapper.handle(event)

    def _send(self, data: Data) -> None:
        if self.listener is not None:
            self.listener(data)

    def summary(self) -> Data:
        return {"session_id": self.session.session_id, "running": self.running,
                "apply": self.apply, "mode": self.session.mode, "workspace": self.session.workspace.label,
                "created": self.created, "prompt": self.prompt[:200],
                "pending_approvals": list(self.pending.values())}


class Sessions:
    def __init__(self, config: Config, opener: Opener, store: SessionStore | None = None,
                 max_live: int = MAX_LIVE, ready: Callable[[], Awaitable[None]] | None = None,
                 grace: float = GRACE, hub: Any = None) -> None:
        self.config = config
        self.hub = hub  # agent/frontends/serve/hosted.py Hub: sessions opened in the session host (None: here)
        self.grace = grace  # seconds a streamed turn goes on with no client connected
        self.ready = ready  # the model layer loaded (agent/frontends/serve/ready.py); turns wait for it
        self.opener = opener
        self.store = store or SessionStore()
        self.max_live = max_live
        self.live: dict[str, Live] = {}

    async def open(self, chat: ChatRequest, session_id: str | None) -> Live:
        """The chat's session: the live one it names, a recorded one resumed, or a new one."""
        if session_id is None:
            live = await self._create(chat, None)
            for message in chat.history:
                live.session.messages.append(message)
                live.session.writer.message(message)
            return live
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
        if self.hub is not None and self.hub.fits(chat, self.config):
            from agent.frontends.serve.hosted import open_hosted

            hosted = await open_hosted(self, chat, resume)
            if hosted is not None:
                return hosted  # the host's model layer runs it: no wait for this process's
        if self.ready is not None:
            await self.ready()
        try:
            target = await self.opener()
        except TargetError as exc:
            raise Unavailable(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None
        workspace: Workspace = target.workspace
        holder: list[Live] = []  # the session's sink is the Live made around it below
        try:
            if chat.apply == "client":
                workspace = OverlayWorkspace(target.workspace)
                for path, text in chat.files().items():
                    _seed(workspace, path, text)
            from agent.session.open import open_session

            ports = SessionPorts(QueueApprover(), lambda event: holder[0].sink(event))
            session = open_session(target, self.config.model_copy(), ports, resume=resume, store=self.store,
                                   meta={"frontend": "serve"}, workspace=workspace)
        except SessionInUse as exc:  # another process writes it: 409, naming the holder
            await target.close()
            raise Busy(str(exc)) from None
        except SessionError as exc:
            await target.close()
            raise NotFound(str(exc)) from None
        except BaseException:
            await target.close()
            raise
        live = Live(session, chat.apply, target)
        holder.append(live)
        self.live[session.session_id] = live
        return live

    async def _make_room(self) -> None:
        """Close the oldest idle sessions so that a new one keeps the live ones within `max_live`."""
        idle = sorted((live for live in self.live.values() if not live.running), key=lambda live: live.created)
        for live in idle[: max(0, len(self.live) + 1 - self.max_live)]:
            await self._close(live)

    async def _close(self, live: Live) -> None:
        self.live.pop(live.session.session_id, None)
        await self.finish(live)
        live.events.close()
        await live.session.close()
        await live.target.close()

    def start(self, live: Live, chat: ChatRequest, listener: Callable[[Data], None]) -> asyncio.Task[Any]:
        """Run one turn; the listener receives its SSE data until the turn ends."""
        prompt, live.prompt, live.listener = chat.prompt(), chat.messages[-1].content, listener
        live.begin(chat)
        live.task = asyncio.create_task(_turn(live.session, prompt), name=f"serve-{live.session.session_id}")
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
                live.session.stop()
                await asyncio.wait({task}, timeout=STOP_WAIT)
        finally:
            live.listener = None
            live.pending.clear()  # a stopped run's approvals were never resolved: nobody can answer them now

    async def answer_first(self, approval_id: str, decision: Decision) -> str:
        """Answer an approval of a session of this server, or of one another front end runs in the
        session host (`run --attach`, the app); its session id. The first answer wins: a late one is
        Busy (409) naming who answered, an unknown id NotFound (404)."""
        for live in self.live.values():
            if approval_id in live.answered:
                raise Busy(f"approval {approval_id!r} was answered already, by {live.answered[approval_id]}")
            ask = getattr(live.session, "answer_in_host", None)
            if ask is not None and approval_id in live.asked:
                reply = await ask(approval_id, decision)
                if not reply.ok:
                    raise (Busy if reply.kind == "conflict" else NotFound)(reply.error)
                return live.session.session_id
        try:
            return self.answer(approval_id, decision).session.session_id
        except NotFound:
            found = await self.hub.answer_elsewhere(approval_id, decision) if self.hub is not None else None
            if found is None:
                raise
            return found

    def answer(self, approval_id: str, decision: Decision) -> Live:
        for live in self.live.values():
            if approval_id in live.session.pending_approvals:
                live.session.answer(approval_id, decision)
                live.answered[approval_id] = "serve"
                return live
        raise NotFound(f"no pending approval {approval_id!r}")

    async def configure(self, live: Live, mode: str | None, profile: str | None) -> None:
        """A turn's settings (a client's `mode`/`edit_mode`, `agent_id`/`profile`), applied to the
        session before its prompt, wherever it runs: BadRequest when one cannot be."""
        configure = getattr(live.session, "configure", None)
        if configure is not None:  # in the session host
            refused = await configure(mode, profile)
            problem = refused.error if refused is not None else None
        else:
            from agent.session import settings

            problem = (settings.set_profile(live.session, profile) if profile else None) or \
                      (settings.set_mode(live.session, mode) if mode else None)
        if problem:
            raise BadRequest(problem)

    def decide_plan(self, session_id: str, decision: PlanDecision) -> None:
        """Answer the plan review (or failed step) the session's run waits for."""
        live = self.live.get(session_id)
        if live is None:
            raise NotFound(f"no live session {session_id!r}")
        reviewer = live.session.plan_reviewer
        if not live.running or reviewer.waiting is None:
            raise Busy(f"session {session_id} waits for no plan decision")
        try:
            reviewer.resolve(decision)
        except ValueError as exc:
            raise BadRequest(str(exc)) from None

    def find(self, session_id: str) -> Live:
        """The live session an id (or a prefix unique among the live ones) names; NotFound otherwise."""
        matches = [live for sid, live in self.live.items() if sid == session_id] or \
                  [live for sid, live in self.live.items() if sid.startswith(session_id)]
        if len(matches) != 1:
            raise NotFound(f"no live session {session_id!r}" if not matches else
                           f"session id {session_id!r} is ambiguous; give more characters")
        return matches[0]

    def listing(self) -> list[Data]:
        return [live.summary() for live in sorted(self.live.values(), key=lambda item: item.created)]

    async def close(self) -> None:
        for live in list(self.live.values()):
            await self._close(live)


async def _turn(session: AgentSession, prompt: str) -> ev.Complete:
    """One turn; in a GitHub workspace a completed turn's edits become a commit on the work branch,
    as at the end of `coder-tui run --github`."""
    from agent.session.github import unpublished

    complete = await session.run(prompt)
    if complete.success and unpublished(session.workspace):
        await _publish(session)
    return complete


async def _publish(session: AgentSession) -> None:
    from agent.github.errors import GitHubError
    from agent.session.github import publish_changes

    try:
        session.emit(await publish_changes(session.workspace))
    except GitHubError as exc:
        session.emit(ev.ErrorEvent(message=f"publishing failed: {exc}; the edits stay in session "
                                           f"{session.session_id} (a later turn publishes them)"))


def _seed(overlay: OverlayWorkspace, path: str, text: str) -> None:
    try:
        overlay.seed(path, text)
    except WorkspaceError as exc:
        raise BadRequest(f"context file {path!r}: {exc}") from None
