"""`LocalHandle`: a session in this process, driven by commands.

It applies each command to the `AgentSession` that `open_session` built (`LocalHandle.open`):
prompts queue and run one at a time, each answered when its turn ends; a stop stops the running
turn and answers every queued prompt (stopped); the first answer to an approval wins and a late
one is refused (`conflict`), naming who answered. It says what happens in the same `Note`s as a
session in the host, so a front end cannot tell the two apart.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent import events as ev
from agent.approval import Approver, Decision, QueueApprover
from agent.client import commands as cmd
from agent.client.commands import Note, Reply
from agent.client.fanout import Fanout, FanoutFace, Item

if TYPE_CHECKING:
    from agent.config import Config
    from agent.planning.review import PlanReviewer
    from agent.session.core import AgentSession
    from agent.session.record import SessionStore
    from agent.session.target import Target
    from agent.workspaces.base import Workspace


@dataclass
class _Turn:
    ticket: int
    prompt: cmd.Prompt
    by: str
    done: asyncio.Future[Reply] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class LocalHandle(FanoutFace):
    def __init__(self, name: str = "this process", target: Target | None = None) -> None:
        self._name, self.target = name, target
        self._session: AgentSession | None = None
        self.fanout = Fanout()
        self.queue: list[_Turn] = []
        self.current: _Turn | None = None
        self.resolved_by: dict[str, str] = {}  # approval id -> who answered it
        self._answering: dict[str, str] = {}  # answered here, its resolved event not seen yet
        self._pending: list[str] = []
        self._tickets = itertools.count(1)
        self._worker: asyncio.Task[None] | None = None
        self.publish = False  # a completed turn's edits in a GitHub workspace become a commit (serve --github)

    @classmethod
    def open(cls, target: Target, config: Config, *, name: str = "this process", resume: str | None = None,
             store: SessionStore | None = None, meta: dict[str, Any] | None = None,
             workspace: Workspace | None = None, reviewer: PlanReviewer | None = None,
             approver: Approver | None = None, listener: Callable[[Item], None] | None = None) -> LocalHandle:
        """A session opened on `target` (SessionError, ProfileError as `open_session` raises them).
        `approver`: the port approvals go to (default: answered by `Answer` commands); `listener`
        hears every item from the start, the warnings the opening says included."""
        from agent.session.open import open_session
        from agent.session.ports import SessionPorts

        handle = cls(name, target)
        if listener is not None:
            handle.listen(listener)
        ports = SessionPorts(approver or QueueApprover(), handle.sink, reviewer)
        handle.bind(open_session(target, config, ports, resume=resume, store=store, meta=meta, workspace=workspace))
        return handle

    def bind(self, session: AgentSession) -> None:
        """The session this handle drives (its sink must be `self.sink`); a resumed one's record first."""
        self._session = session
        if session.restored is not None:
            for data in session.restored.events:
                try:
                    self.fanout.log.append(ev.parse_event(data))
                except ValueError:
                    continue  # a recorded line of an older version: not shown again

    @property
    def session(self) -> AgentSession:
        assert self._session is not None, "bind() a session first"
        return self._session

    # -- the SessionHandle face -----------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def mode(self) -> str:
        return self.session.mode

    @property
    def running(self) -> bool:
        return self.current is not None

    async def submit(self, command: cmd.Command) -> Reply:
        if isinstance(command, cmd.Prompt):
            return await self._prompt(command)
        if isinstance(command, cmd.Answer):
            return self._answer(command)
        if isinstance(command, cmd.Stop):
            return self.stop(self._name)
        if isinstance(command, cmd.Detach):
            return Reply(data={"detached": True})
        if isinstance(command, cmd.Undo):
            return await self._undo(command)
        if isinstance(command, cmd.PlanDecision):
            return self._plan(command)
        return self._setting(command)

    # -- events ---------------------------------------------------------------------------
    def sink(self, event: Any) -> None:
        if isinstance(event, ev.ApprovalRequired):
            self._pending.append(event.approval_id)
        elif isinstance(event, ev.ApprovalResolved) and event.approval_id in self._pending:
            self._pending.remove(event.approval_id)
        self.fanout.publish(event)
        if isinstance(event, ev.ApprovalResolved) and event.approval_id in self._answering:
            self.resolved_by[event.approval_id] = by = self._answering.pop(event.approval_id)
            self.note("approval_answered", approval_id=event.approval_id, decision=event.decision, by=by)

    def note(self, kind: str, **data: Any) -> None:
        self.fanout.publish(Note(kind, {"type": kind, **data}))

    # -- turns ----------------------------------------------------------------------------
    async def _prompt(self, prompt: cmd.Prompt) -> Reply:
        if not prompt.text.strip() and self.session.unfinished_plan is None:
            return Reply.refused("prompt: the text is empty")
        turn = _Turn(next(self._tickets), prompt, self._name)
        ahead = len(self.queue) + (self.current is not None)
        self.queue.append(turn)
        if ahead:
            self.note("prompt_queued", ticket=turn.ticket, by=turn.by, prompt=prompt.text[:200], ahead=ahead)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name=f"local-{self.session_id}")
        return await turn.done

    async def _work(self) -> None:
        while self.queue:
            self.current = turn = self.queue.pop(0)
            self.note("turn_started", ticket=turn.ticket, by=turn.by, prompt=turn.prompt.text[:200])
            done: dict[str, Any] = {"ticket": turn.ticket, "by": turn.by}
            try:
                complete = await self.session.run(*await self._request(turn.prompt))
                if self.publish and complete.success:
                    await self._publish()
                done.update(success=complete.success, completion_reason=complete.completion_reason)
            except BrokenPipeError as exc:  # a listener's reader left (`run | head`): the submitter's to handle
                done.update(success=False, completion_reason="error", error="the output's reader left")
                if not turn.done.done():
                    turn.done.set_exception(exc)
            except Exception as exc:  # noqa: BLE001 - one turn's failure is its reply; the next turns run
                done.update(success=False, completion_reason="error", error=f"{type(exc).__name__}: {exc}")
            finally:
                self.current = None
            self.note("turn_done", **done)
            if not turn.done.done():
                turn.done.set_result(Reply(data=done))

    async def _request(self, prompt: cmd.Prompt) -> tuple[str, list[Any] | None]:
        """The text the model gets (mentioned files attached) and the images read from their paths."""
        text = prompt.text
        if prompt.mentions:
            from agent.attachments import attach_mentions

            text, problems = await attach_mentions(self.session.workspace, text, list(prompt.mentions))
            for problem in problems:
                self.session.emit(ev.WarningEvent(message=problem))
        if not prompt.images:
            return text, None
        from pathlib import Path

        from agent.images import from_path

        return text, [from_path(Path(path), path) for path in prompt.images]

    def add_history(self, messages: list[dict[str, str]]) -> None:
        """Earlier messages a client brings (a chat's history), before the first turn."""
        for message in messages:
            self.session.messages.append(message)
            self.session.writer.message(message)

    async def _publish(self) -> None:
        """The turn's edits in a GitHub workspace committed on the work branch, as at the end of
        `coder-tui run --github` (nothing in another workspace)."""
        from agent.github.errors import GitHubError
        from agent.session.github import publish_changes, unpublished

        session = self.session
        if not unpublished(session.workspace):
            return
        try:
            session.emit(await publish_changes(session.workspace))
        except GitHubError as exc:
            session.emit(ev.ErrorEvent(message=f"publishing failed: {exc}; the edits stay in session "
                                               f"{session.session_id} (a later turn publishes them)"))

    def stop(self, by: str) -> Reply:
        """Stop the running turn; every queued prompt is answered (stopped) and the clients told."""
        dropped, self.queue = self.queue, []
        if dropped:
            self.note("prompts_dropped", by=by, tickets=[t.ticket for t in dropped],
                      prompts=[{"ticket": t.ticket, "by": t.by, "prompt": t.prompt.text[:200]} for t in dropped])
        for turn in dropped:
            if not turn.done.done():
                turn.done.set_result(Reply(data={"ticket": turn.ticket, "by": turn.by, "success": False,
                                                 "completion_reason": "stopped", "dropped": True}))
        stopped = self._session is not None and self.session.stop()
        return Reply(data={"stopped": stopped, "dropped": [t.ticket for t in dropped]})

    # -- answers and settings ---------------------------------------------------------------
    def _answer(self, answer: cmd.Answer) -> Reply:
        approval_id = answer.approval_id or (self._pending[0] if self._pending else None)
        if approval_id is None:
            return Reply.refused("no approval is waiting", "not_found")
        by = self.resolved_by.get(approval_id) or self._answering.get(approval_id)
        if by is not None:
            return Reply.refused(f"approval {approval_id!r} was answered already, by {by}", "conflict")
        if approval_id not in self.session.pending_approvals:
            return Reply.refused(f"no pending approval {approval_id!r}", "not_found")
        decision = Decision(answer.decision, answer.feedback, rejected_hunks=answer.rejected_hunks,
                            edited=answer.edited)
        if not self.session.answer(approval_id, decision):
            return Reply.refused(f"approval {approval_id!r} was answered already", "conflict")
        self._answering[approval_id] = self._name
        return Reply(data={"approval_id": approval_id})

    def _setting(self, command: cmd.Command) -> Reply:
        from agent.client.settings import apply_setting

        return apply_setting(self.session, command, self._name, self.note)

    async def _undo(self, undo: cmd.Undo) -> Reply:
        from agent.checkpoints import CheckpointError

        if self.current is not None:
            return Reply.refused("undo: a turn is running; stop it first", "conflict")
        try:
            restored, _saved = await self.session.undo(undo.ref)
        except CheckpointError as exc:
            return Reply.refused(f"undo: {exc}")
        return Reply(data={"restored": restored.label})

    def _plan(self, decision: cmd.PlanDecision) -> Reply:
        from agent.client.settings import decide_plan

        return decide_plan(self.session, decision)

    async def close(self, detach: bool = False) -> None:
        """Stop what runs (a session in this process has nobody to go on for), close the session."""
        if self._worker is not None and not self._worker.done():
            self.stop(self._name)
            await asyncio.wait({self._worker}, timeout=30)
        self.fanout.close()
        if self._session is not None:
            await self.session.close()
        if self.target is not None:
            await self.target.close()
