"""The app's side of the agent: one AgentSession, its runs, approvals, undo and sessions.

The loop runs as a Textual worker on the app's event loop; its events go straight to the
presenter and approvals dock under the conversation. Everything heavy (the agent core, litellm) is
imported after the first frame. The bridge knows the app only as a `SessionHost` (tui/ports.py);
boot gives it the target that `agent.session.target.open_target` opened (`attach_target`, and `link_room`
for a room's pane while it joins).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from agent.attachments import attach_mentions
from agent.images import looks_like_image, prompt_images

if TYPE_CHECKING:
    from agent.approval import ApprovalRequest, Decision
    from agent.checkpoints import CheckpointInfo
    from agent.config import Config
    from agent.events import Mode
    from agent.session.core import AgentSession
    from agent.session.target import Target
    from agent.workspaces.base import Workspace
    from tui.controller import HandleController
    from tui.ports import SessionHost
    from tui.roomlink import RoomLink

Sink = Callable[[Any], None]


class TuiApprover:
    """Answers approvals through the host (the panel docked under the conversation)."""

    def __init__(self, host: SessionHost) -> None:
        self.host = host

    async def decide(self, request: ApprovalRequest) -> Decision:
        return await self.host.ask_approval(request)


class AgentBridge:
    def __init__(self, host: SessionHost, sink: Sink) -> None:
        self.host = host
        self.sink = sink
        self.session: AgentSession | None = None
        self.target: Target | None = None  # what every session works on (attach_target)
        self.approver = TuiApprover(host)
        self.waiting: list[tuple[str, list[str]]] = []  # prompts sent before the session was ready
        self.pursuing = False  # a goal runs (`/goal`): between its rounds, while the check runs, prompts wait
        self.goal_halted = False  # stopped while a goal's check ran: no next round
        self.room: RoomLink | None = None  # when the workspace is a live room (link_room)
        self.failure: tuple[str, str] | None = None  # why the agent could not start, and what to do
        self._quiet = True  # between runs, and after a stop until the next run starts
        self.driver: HandleController | None = None  # the app's driver of a session handle (tui/attaching.py)

    # -- the target -----------------------------------------------------------------------
    def attach_target(self, target: Target) -> None:
        """The target every session opens on and is bound to (the first, and after /clear or /resume)."""
        self.target = target
        if self.room is not None:
            self.room.joined(target)

    @property
    def workspace(self) -> Workspace | None:
        return self.target.workspace if self.target is not None else None

    def link_room(self, link: RoomLink) -> None:
        """A live room: its pane shows the join as it happens, before the workspace exists."""
        self.room = link

    def fail(self, message: str, fix: str) -> None:
        """The agent could not start: prompts are not kept for a session that will never come."""
        self.failure = (message, fix)

    def clear_failure(self) -> None:
        """Starting again (setup chose another model): prompts wait for the session once more."""
        self.failure = None

    # -- state ----------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.session is not None or self.driver is not None

    @property
    def running(self) -> bool:
        if self.driver is not None:
            return self.driver.running
        return self.session is not None and (self.session.running or self.pursuing)

    async def drive(self, driver: HandleController) -> None:
        """From now on the session is the one `driver`'s handle holds: the in-process one, or the
        handle driven before, is closed or left first (a run in the host goes on)."""
        old, self.driver = self.driver, driver
        self.waiting.clear()
        if old is not None:
            await old.detach()
        if self.session is not None:
            session, self.session = self.session, None
            await session.close(keep_workspace=True)

    @property
    def on_github(self) -> bool:
        """The workspace is a GitHub repository (API or clone): /pr and publishing apply."""
        return getattr(self.workspace, "github", None) is not None

    def open_session(self, config: Config, resume: str | None = None) -> AgentSession:
        """A new AgentSession on the attached target (or the continuation of a recorded one)."""
        from agent.session.open import open_session
        from agent.session.ports import SessionPorts

        assert self.target is not None, "attach_target comes first"
        ports = SessionPorts(self.approver, self._deliver, self.host.plan_reviewer())
        self.session = open_session(self.target, config, ports, resume=resume)
        return self.session

    def _deliver(self, event: Any) -> None:
        """Events to the app, without the text a stopped or finished run still delivers: the model
        streams on another thread, ahead of the app, so text can arrive after the stop (and even
        after the run's end), and a fast long answer would go on being drawn for a minute."""
        from agent.events import Complete, ErrorEvent, RunStarted, TextDelta  # loaded with the session

        if isinstance(event, RunStarted):
            self._quiet = False
        elif isinstance(event, TextDelta) and self._quiet:
            return
        self.sink(event)
        if isinstance(event, Complete):
            self._quiet = True
        elif isinstance(event, ErrorEvent) and event.configuration:  # unknown model or provider, no key
            self.host.configuration_failed(event.message)

    # -- running --------------------------------------------------------------------------
    def submit(self, text: str, mentions: list[str]) -> str:
        """Send a prompt; returns what happened: "started", "routed", "queued", "host-queued" (behind a
        turn in the session host), "waiting" or "failed"."""
        if self.driver is not None:
            return self.driver.submit(text, mentions)
        if self.room is not None and self.session is not None:
            self.room.ask(text)
            return "queued" if self.running else "started"
        if self.session is None and self.failure is not None:
            return "failed"  # nothing would ever send it
        if self.session is None:
            self.waiting.append((text, mentions))
            return "waiting"
        if self.session.send(text):  # a plan runs: routed between its steps (a question, a change)
            return "routed"
        if self.running or self.waiting:
            self.waiting.append((text, mentions))
            return "queued"
        self._start(text, mentions)
        return "started"

    def _start(self, text: str, mentions: list[str]) -> None:
        self.host.run_task(self._run(text, mentions), name="agent-run", group="agent")

    async def _run(self, text: str, mentions: list[str]) -> None:
        from agent.events import ErrorEvent

        assert self.workspace is not None, "runs start once the session exists"
        images, problems = await prompt_images(text, self.workspace.root)
        mentions = [m for m in mentions if not looks_like_image(m)]
        prompt, unread = await attach_mentions(self.workspace, text, mentions)
        for problem in problems + unread:
            self.sink(ErrorEvent(message=problem, recoverable=True))
        try:
            if self.session is None:  # /clear closing the old one while the mentions were read
                raise RuntimeError("the session closed before the run started")
            if problems or not self._images_taken(images):
                self.host.agent_idle()
            else:
                if images:
                    self.host.notice("images: " + ", ".join(image.name for image in images), "dim")
                await self.session.run(prompt, images)
        except Exception as exc:  # noqa: BLE001 - a crashed run must not take the app down
            self.sink(ErrorEvent(message=f"the run failed: {exc}", recoverable=False))
            self.host.agent_idle()
        self._next()

    def start_goal(self, check: str, rounds: int) -> None:
        """`/goal`: turns until the check passes (agent/subagents/goal.py), as one run of the app."""
        self.host.run_task(self._goal(check, rounds), name="agent-run", group="agent")

    async def _goal(self, check: str, rounds: int) -> None:
        from agent.events import ErrorEvent
        from agent.subagents.goal import goal_prompt, pursue

        self.pursuing, self.goal_halted = True, False
        try:
            assert self.session is not None, "/goal starts once the session exists"
            await pursue(self.session, goal_prompt(check), check, rounds, halted=lambda: self.goal_halted)
        except Exception as exc:  # noqa: BLE001 - a crashed goal must not take the app down
            self.sink(ErrorEvent(message=f"the goal failed: {exc}", recoverable=False))
            self.host.agent_idle()
        finally:
            self.pursuing = False
        self._next()

    def _images_taken(self, images: list[Any]) -> bool:
        """Whether the model takes the prompt's images (else the refusal is shown, nothing sent)."""
        from agent.events import ErrorEvent
        from agent.images import ImageError

        if not images or self.session is None:
            return True
        try:
            self.session.check_images()
        except ImageError as exc:
            self.sink(ErrorEvent(message=f"Not sent (Up recalls it): {exc}", recoverable=True))
            return False
        return True

    def _next(self) -> None:
        if self.waiting and self.session is not None and not self.session.running:
            text, mentions = self.waiting.pop(0)
            self.host.show_prompt(text, mentions)
            self._start(text, mentions)

    def session_ready(self) -> None:
        """The session exists: send what the user typed while it loaded."""
        self._next()

    def stop(self) -> bool:
        self._quiet = True
        dropped, self.waiting = self.waiting, []
        for text, _mentions in reversed(dropped):  # back in the input, the first one first
            self.host.restore_prompt(text)
        if self.driver is not None:
            return self.driver.stop()
        if self.room is not None:
            self.room.clear_queue()
        if self.pursuing:  # a goal: no next round, whether a turn or its check runs now
            self.goal_halted = True
            if self.session is not None:
                self.session.stop()
            return True
        return self.session is not None and self.session.stop()

    # -- settings -------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        if self.session is not None:
            self.session.mode = cast("Mode", mode)  # one of MODES: the app offers no other

    def set_model(self, model: str) -> None:
        if self.session is not None:
            self.session.model = model

    # -- checkpoints and sessions ---------------------------------------------------------
    async def undo(self, ref: str | None, include_untouched: bool = False) -> tuple[CheckpointInfo, CheckpointInfo]:
        assert self.session is not None, "undo needs the session (commands check it is ready)"
        return await self.session.undo(ref, include_untouched)

    async def new_session(self, config: Config, resume: str | None = None) -> AgentSession:
        """Close the current conversation and start another (or resume a recorded one).

        A session to resume is found first (SessionError when there is none, or when it belongs
        to another workspace), so a bad id leaves the current conversation as it is.
        """
        assert self.workspace is not None, "a new session needs the attached workspace"
        if resume:
            check_resumable(resume, self.workspace.label, self.session.session_id if self.session else None)
        old, self.session = self.session, None
        if old is not None:
            old.stop()
            await old.close(keep_workspace=True)
        return self.open_session(config, resume)

    async def shutdown(self) -> None:
        if self.driver is not None:  # a run in the host goes on
            driver, self.driver = self.driver, None
            await driver.detach()
        if self.session is not None:
            self.session.stop()
            await asyncio.sleep(0)
            await self.session.close()
            self.session = None
        if self.target is not None:  # a room is left; a room that was never joined was left already
            await self.target.close()


def check_resumable(ref: str, workspace: str, current: str | None = None) -> None:
    """SessionError unless `ref` names a recorded session of this workspace that no other
    process has open (`current`: the app's own session, which it closes first)."""
    from agent.session.lock import holder_of, in_use
    from agent.session.listing import summary_of
    from agent.session.record import SessionError, SessionInUse, SessionStore

    path = SessionStore().resolve(ref, workspace=workspace)
    summary = summary_of(path)
    if summary is not None and summary.workspace != workspace:
        raise SessionError(f"session {summary.id} worked on {summary.workspace}, not {workspace}; "
                           "start coder-tui there to continue it")
    if path.stem != current and (holder := holder_of(path)) is not None:  # before the current conversation is closed
        raise SessionInUse(in_use(path, holder))
