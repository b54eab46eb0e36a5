"""The app's side of the agent: one AgentSession, its runs, approvals, undo and sessions.

The loop runs as a Textual worker on the app's event loop; its events go straight to the
presenter and approvals dock under the conversation. Everything heavy (the agent core, litellm) is
imported after the first frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tui.mentions import attach_mentions

Sink = Callable[[Any], None]


class TuiApprover:
    """Answers approvals from the panel docked under the conversation (the loop awaits it)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def decide(self, request: Any) -> Any:
        from tui.widgets.approvaldock import dock

        self.app.bell()
        return await dock(self.app, request)


class AgentBridge:
    def __init__(self, app: Any, sink: Sink) -> None:
        self.app = app
        self.sink = sink
        self.session: Any = None
        self.workspace: Any = None
        self.registry_factory: Callable[[], Any] | None = None
        self.meta: dict[str, Any] | None = None
        self.approver = TuiApprover(app)
        self.waiting: list[tuple[str, list[str]]] = []  # prompts sent before the session was ready
        self.room: Any = None  # a RoomLink when the workspace is a live room
        self.run_worker: Any = None
        self.failure: tuple[str, str] | None = None  # why the agent could not start, and what to do
        self._quiet = True  # between runs, and after a stop until the next run starts

    # -- state ----------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.session is not None

    @property
    def running(self) -> bool:
        return self.session is not None and self.session.running

    def open_session(self, config: Any, resume: str | None = None) -> Any:
        """A new AgentSession on the current workspace (or the continuation of a recorded one)."""
        from agent.runner import AgentSession
        from agent.tools import sandbox

        registry = self.registry_factory() if self.registry_factory else None
        self.session = AgentSession.open(config, self.workspace, self.approver, self._deliver, resume=resume,
                                         registry=registry, meta=self.meta)
        sandbox.configure(self.session)
        from tui.screens.planreview import TuiPlanReviewer

        self.session.plan_reviewer = TuiPlanReviewer(self.app, self.session)
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
            from tui.boot import apply_setup

            self.app.run_worker(apply_setup(self.app, event.message), name="setup", exit_on_error=False)

    # -- running --------------------------------------------------------------------------
    def submit(self, text: str, mentions: list[str]) -> str:
        """Send a prompt; returns what happened: "started", "queued", "waiting" or "failed"."""
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
        self.run_worker = self.app.run_worker(self._run(text, mentions), name="agent-run", group="agent",
                                              exit_on_error=False)

    async def _run(self, text: str, mentions: list[str]) -> None:
        from agent.events import ErrorEvent

        prompt, problems = await attach_mentions(self.workspace, text, mentions)
        for problem in problems:
            self.sink(ErrorEvent(message=problem, recoverable=True))
        try:
            await self.session.run(prompt)
        except Exception as exc:  # noqa: BLE001 - a crashed run must not take the app down
            self.sink(ErrorEvent(message=f"the run failed: {exc}", recoverable=False))
            self.app.agent_idle()
        self._next()

    def _next(self) -> None:
        if self.waiting and self.session is not None and not self.session.running:
            text, mentions = self.waiting.pop(0)
            self.app.show_prompt(text, mentions)
            self._start(text, mentions)

    def session_ready(self) -> None:
        """The session exists: send what the user typed while it loaded."""
        self._next()

    def stop(self) -> bool:
        self._quiet = True
        self.waiting.clear()
        if self.room is not None:
            self.room.clear_queue()
        return self.session is not None and self.session.stop()

    # -- settings -------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        if self.session is not None:
            self.session.mode = mode

    def set_model(self, model: str) -> None:
        if self.session is not None:
            self.session.model = model

    # -- checkpoints and sessions ---------------------------------------------------------
    async def undo(self, ref: str | None) -> tuple[Any, Any]:
        return await self.session.undo(ref)

    async def new_session(self, config: Any, resume: str | None = None) -> Any:
        """Close the current conversation and start another (or resume a recorded one).

        A session to resume is found first (SessionError when there is none, or when it belongs
        to another workspace), so a bad id leaves the current conversation as it is.
        """
        if resume:
            check_resumable(resume, self.workspace.label)
        old, self.session = self.session, None
        if old is not None:
            old.stop()
            await old.close(keep_workspace=True)
        return self.open_session(config, resume)

    async def shutdown(self) -> None:
        if self.session is not None:
            self.session.stop()
            await asyncio.sleep(0)
            await self.session.close()
            self.session = None
        if self.room is not None:
            await self.room.leave()


def check_resumable(ref: str, workspace: str) -> None:
    """SessionError unless `ref` names a recorded session of this workspace."""
    from agent.session import SessionError, SessionStore, summary_of

    summary = summary_of(SessionStore().resolve(ref, workspace=workspace))
    if summary is not None and summary.workspace != workspace:
        raise SessionError(f"session {summary.id} worked on {summary.workspace}, not {workspace}; "
                           "start coder-tui there to continue it")
