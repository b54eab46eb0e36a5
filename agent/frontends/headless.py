"""`coder-tui run`: the agent without a UI. Readable streaming output, or one JSON event per line.

Approvals (ask mode) are answered on stdin with JSON decision lines (or, in readable mode, the
shorthands y / a / n [feedback] / s). When stdin closes, pending and later approvals are denied
with a message saying why; answers that come before their approval are kept and used in order.
A `--github` run that completed publishes its edits as one commit on its work branch at the end
(a `published` event says where; `--no-publish` keeps them in the session). Exit codes: 0
completed, 1 the run failed or was stopped (or publishing failed), 2 usage or configuration
errors, 3 an approval was denied because stdin closed before anyone answered it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agent.approval import Decision, QueueApprover
from agent.config import first_problem
from agent.events import ApprovalRequired, DecisionKind, ErrorEvent, WarningEvent
from agent.frontends.stdin import PlanLines
from agent.frontends.printing import JsonPrinter, TextPrinter

SHORTHAND: dict[str, DecisionKind] = {"y": "allow_once", "a": "allow_all", "n": "deny", "s": "stop"}
UNANSWERED = 3  # exit code: an approval was denied because stdin closed before an answer came


class UsageError(Exception):
    """Bad flags or configuration: exit code 2 with a one-line message."""


class DecisionLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["decision"]
    approval_id: str | None = None  # None: the next approval, in the order they are asked
    decision: DecisionKind
    feedback: str | None = None
    rejected_hunks: dict[str, list[int]] = {}
    edited: dict[str, str] = {}


class StdinApprover(QueueApprover):
    """A QueueApprover fed by lines from stdin (read in a thread: pipes, files and TTYs alike).

    An answer without an approval id (a shorthand, or a JSON decision without `approval_id`)
    that arrives while no approval waits is kept and answers the next approvals in order, so
    `echo y | coder-tui run ...` works however early the `y` comes.
    """

    def __init__(self, emit: Any, shorthand: bool) -> None:
        super().__init__()
        self.emit = emit
        self.shorthand = shorthand
        self.waiting: list[str] = []  # approval ids in the order they were asked
        self.early: list[Decision] = []  # answers that came before their approval
        self.unanswered = 0  # approvals denied because stdin closed before an answer came
        self.lines: PlanLines | None = None

    def attach(self, session: Any) -> None:
        """Plan decisions and messages for a running plan come on the same stdin."""
        self.lines = PlanLines(session, self.shorthand, self.emit)

    def close(self, reason: str) -> None:
        super().close(reason)
        if self.lines is not None:
            self.lines.close(reason)

    def note_request(self, event: Any) -> None:
        if isinstance(event, ApprovalRequired):
            self.waiting.append(event.approval_id)

    async def decide(self, request: Any) -> Decision:
        if self.early:
            self._answered(request.approval_id)
            return self.early.pop(0)
        decision = await super().decide(request)
        if decision.decision == "deny" and self.closed_reason is not None and decision.feedback == self.closed_reason:
            self.unanswered += 1
            self._answered(request.approval_id)
        return decision

    def _answered(self, approval_id: str) -> None:
        if approval_id in self.waiting:
            self.waiting.remove(approval_id)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        threading.Thread(target=self._read, args=(loop,), name="stdin-decisions", daemon=True).start()

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        reason = "stdin is closed, so nobody can answer approvals; answer on stdin or use --mode allow"
        try:
            stream = sys.stdin
            if stream is None:
                raise OSError("no stdin")
            for line in stream:
                loop.call_soon_threadsafe(self.handle_line, line)
        except (OSError, ValueError) as exc:
            reason = f"stdin is not readable ({exc}); approvals are denied"
        loop.call_soon_threadsafe(self.close, reason)

    def handle_line(self, line: str) -> None:
        text = line.strip()
        if not text or (self.lines is not None and self.lines.handle(text)):
            return
        try:
            approval_id, decision = self._parse(text)
        except ValueError as exc:
            self.emit(ErrorEvent(message=f"ignored stdin line: {exc}", recoverable=True))
            return
        if approval_id is None:
            if not self.waiting:
                self.early.append(decision)
                return
            approval_id = self.waiting[0]
        if not self.resolve(approval_id, decision):
            self.emit(ErrorEvent(message=f"ignored decision: no pending approval {approval_id!r}",
                                 recoverable=True))
            return
        self._answered(approval_id)

    def _parse(self, text: str) -> tuple[str | None, Decision]:
        if not text.startswith("{"):
            word, _, feedback = text.partition(" ")
            if self.shorthand and word.lower() in SHORTHAND:
                return None, Decision(SHORTHAND[word.lower()], feedback=feedback.strip() or None)
            raise ValueError(f"expected a JSON decision object, got {text[:60]!r}")
        try:
            parsed = DecisionLine.model_validate_json(text)
        except ValidationError as exc:
            where, problem = first_problem(exc, "line")
            raise ValueError(f"invalid decision ({where}: {problem})") from None
        return parsed.approval_id, Decision(parsed.decision, parsed.feedback,
                                            parsed.rejected_hunks, parsed.edited)


def build_config(options: Any, workspace_root: Path | None) -> Any:
    from agent.config import ConfigError, load_config, trust_folder

    flags = {"model": options.model, "api_base": options.api_base, "api_key": options.api_key,
             "mode": options.mode, "max_steps": options.max_steps, "sandbox": getattr(options, "sandbox", None),
             "profile": getattr(options, "profile", None),
             "max_cost": getattr(options, "max_cost", None), "max_tokens": getattr(options, "max_tokens", None),
             "workflow": getattr(options, "workflow", None)}
    trust = bool(getattr(options, "trust", False)) and workspace_root is not None
    try:
        if trust:
            trust_folder(workspace_root)
        config = load_config(workspace_root, flags, trust=trust)
        config.require_model()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return config


async def run_headless(options: Any) -> int:
    """Run one prompt headless; returns the exit code."""
    from agent.profiles import ProfileError
    from agent.runner import AgentSession
    from agent.session import SessionError
    from agent.tools import sandbox

    printer = JsonPrinter(sys.stdout) if options.json else TextPrinter(sys.stdout, sys.stderr)
    target = await _open(options, printer)
    if not target.prompt.strip() and not options.resume:
        await target.close()
        raise UsageError("PROMPT is required (or --issue N with --github, or --resume to continue a plan)")
    config = build_config(options, target.workspace.root)
    await _check_model(config)
    approver = StdinApprover(emit=lambda event: session.emit(event), shorthand=not options.json)
    misconfigured: list[ErrorEvent] = []

    def sink(event: Any) -> None:
        approver.note_request(event)
        if isinstance(event, ErrorEvent) and event.configuration:
            misconfigured.append(event)
        printer.handle(event)

    try:
        session = AgentSession.for_target(config, target, approver, sink, resume=options.resume)
    except SessionError as exc:
        raise UsageError(f"--resume: {exc}") from None
    except ProfileError as exc:
        raise UsageError(str(exc)) from None
    prompt = await _prompt_for(session, target.prompt)
    approver.attach(session)
    sandbox.configure(session)
    for why in config.ignored:
        session.emit(WarningEvent(message=f"ignored {why} (the folder is not trusted; run with --trust to use it)"))
    loop = asyncio.get_running_loop()
    approver.start(loop)
    _install_interrupt(loop, session, printer)
    try:
        complete = await session.run(prompt)
        published = await _publish(options, session, complete) if target.github is not None else True
    finally:
        await session.close()
        await target.close()
    printer.summary(complete, session.totals, session.session_id)
    if misconfigured:  # an unknown model or provider, no key: the configuration, not the run, failed
        return 2
    return _exit_code(complete, approver, published, printer)


async def _prompt_for(session: Any, prompt: str) -> str:
    """The prompt; none continues the resumed session's unfinished plan (a UsageError without one)."""
    if not prompt.strip() and session.unfinished_plan is None:
        await session.close()
        raise UsageError("PROMPT is required: the resumed session has no unfinished plan to continue")
    return prompt


async def _check_model(config: Any) -> None:
    """An unknown provider is a configuration error, found before the run starts (exit 2)."""
    from agent.llm import configuration_problem

    problem = await configuration_problem(config.model)
    if problem is not None:
        raise UsageError(f"{problem}; the model is set by: {config.sources.get('model', 'the configuration')}")


def _exit_code(complete: Any, approver: StdinApprover, published: bool, printer: Any) -> int:
    if approver.lines is not None and approver.lines.unanswered:
        printer.handle(ErrorEvent(recoverable=False, message=(
            f"the plan was not run: stdin closed before anyone reviewed it (exit code {UNANSWERED}). "
            'Answer on stdin ({"type": "plan_decision", "decision": "approve"}) or use --mode allow.')))
        return UNANSWERED
    if approver.unanswered:
        count = f"{approver.unanswered} approval{'s' if approver.unanswered != 1 else ''}"
        printer.handle(ErrorEvent(recoverable=False, message=(
            f"{count} denied because stdin closed before an answer came: what they asked for was not "
            f"done (exit code {UNANSWERED}). Answer on stdin (e.g. `echo y |`) or use --mode allow.")))
        return UNANSWERED
    return 0 if complete.success and published else 1


async def _publish(options: Any, session: Any, complete: Any) -> bool:
    """A GitHub run's edits, published as one commit on the work branch (False: that failed)."""
    from agent.github.errors import GitHubError
    from agent.github.launch import publish_changes, unpublished

    files = unpublished(session.workspace)
    if not files:
        return True
    keep = (f"{len(files)} changed file{'s' if len(files) != 1 else ''} kept unpublished in session "
            f"{session.session_id}: continue with --resume {session.session_id}, or /pr in the app")
    if getattr(options, "no_publish", False) or not complete.success:
        why = "--no-publish" if getattr(options, "no_publish", False) else "the run did not complete"
        session.emit(ErrorEvent(message=f"not published ({why}); {keep}", recoverable=True))
        return True
    try:
        session.emit(await publish_changes(session.workspace))
    except GitHubError as exc:
        session.emit(ErrorEvent(message=f"publishing failed: {exc}; {keep}", recoverable=False))
        return False
    return True


async def _open(options: Any, printer: Any) -> Any:
    """The opened target: --github's repository, or the local folder (UsageError when it cannot open)."""
    from agent.target import TargetError, TargetSpec, open_target

    spec = TargetSpec.from_options(options)
    if getattr(options, "no_publish", False) and not (spec.github or spec.clone or spec.issue is not None):
        raise UsageError("--no-publish needs --github OWNER/REPO (a local folder's edits are written in place)")
    config = build_config(options, None) if spec.github else None
    try:
        return await open_target(spec, config, emit=printer.handle, notice=printer.notice)
    except TargetError as exc:
        raise UsageError(exc.message) from None


def _install_interrupt(loop: asyncio.AbstractEventLoop, session: Any, printer: Any) -> None:
    presses = {"count": 0}

    def on_interrupt() -> None:
        presses["count"] += 1
        if presses["count"] == 1 and session.stop():
            printer.notice("stopping… (press Ctrl+C again to quit at once)")
            return
        os._exit(130)

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        pass


def main(options: Any) -> int:
    try:
        return asyncio.run(run_headless(options))
    except UsageError as exc:
        print(f"coder-tui: error: {exc}", file=sys.stderr)
        return 2
