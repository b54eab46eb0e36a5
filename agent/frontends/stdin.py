"""Answers on stdin for the command-line front ends: approvals, plan decisions, plan messages.

    {"type": "decision", "approval_id": "...", "decision": "allow_once", "feedback": "..."}
    {"type": "plan_decision", "decision": "approve"}          (see agent/planning/review.py)
    {"type": "message", "text": "also update the README"}     (routed between the plan's steps)

The shorthands y / a / n [feedback] / s answer the next approval (in readable and JSON mode
alike, so `echo y | coder-tui run --json ...` works); while a plan decision waits, y approves,
f TEXT sends feedback, r / k / s retry, skip or stop.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.approval import Decision, QueueApprover
from agent.config import first_problem
from agent.events import ApprovalRequired, ApprovalResolved, Complete, DecisionKind, ErrorEvent
from agent.planning.review import parse_line

UNANSWERED = 3  # exit code: an approval was denied because stdin closed before an answer came

if TYPE_CHECKING:
    from agent.session.core import AgentSession


class MessageLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["message"]
    text: str = Field(min_length=1)


class PlanLines:
    def __init__(self, session: AgentSession, shorthand: bool, emit: Any) -> None:
        self.session = session
        self.shorthand = shorthand
        self.emit = emit

    @property
    def unanswered(self) -> int:
        return int(getattr(self.session.plan_reviewer, "unanswered", 0))

    def handle(self, text: str) -> bool:
        """True when the line was for the plan (handled, or refused with an error event)."""
        if text.startswith("{") and '"message"' in text:
            try:
                line = MessageLine.model_validate_json(text)
            except ValidationError:
                line = None
            if line is not None:
                if not self.session.send(line.text):
                    self.emit(ErrorEvent(message="ignored message: no plan is running", recoverable=True))
                return True
        reviewer = self.session.plan_reviewer
        waiting = getattr(reviewer, "waiting", None) is not None
        if not waiting and '"plan_decision"' not in text:
            return False
        try:
            decision = parse_line(text, self.shorthand and waiting)
            if decision is None:
                return False
            reviewer.resolve(decision)
        except ValueError as exc:
            self.emit(ErrorEvent(message=f"ignored stdin line: {exc}", recoverable=True))
        return True

    def close(self, reason: str) -> None:
        closer = getattr(self.session.plan_reviewer, "close", None)
        if closer is not None:
            closer(reason)


SHORTHAND: dict[str, DecisionKind] = {"y": "allow_once", "a": "allow_all", "n": "deny", "s": "stop"}


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
        self.by_rules = 0  # of those, asked in allow mode: an `ask` permission rule asked for them
        self.lines: PlanLines | None = None
        self.session: AgentSession | None = None

    def attach(self, session: AgentSession) -> None:
        """Plan decisions and messages for a running plan come on the same stdin."""
        self.session = session
        self.lines = PlanLines(session, self.shorthand, self.emit)

    def close(self, reason: str) -> None:
        super().close(reason)
        if self.lines is not None:
            self.lines.close(reason)

    def note_request(self, event: Any) -> None:
        if isinstance(event, ApprovalRequired):
            self.waiting.append(event.approval_id)
        elif isinstance(event, ApprovalResolved):  # answered elsewhere too (a room peer, in the chat)
            self._answered(event.approval_id)

    async def decide(self, request: Any) -> Decision:
        if self.early:
            self._answered(request.approval_id)
            return self.early.pop(0)
        decision = await super().decide(request)
        if decision.decision == "deny" and self.closed_reason is not None and decision.feedback == self.closed_reason:
            self.unanswered += 1
            self._answered(request.approval_id)
            if self.session is not None and self.session.mode == "allow":  # only an `ask` rule asks then
                self.by_rules += 1
                return Decision("deny", feedback=f"{BY_RULE}; stdin is closed, so nobody can answer it")
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
        return parse_answer(text, self.shorthand)


def parse_answer(text: str, shorthand: bool = True) -> tuple[str | None, Decision]:
    """An approval's answer from a stdin line: (its approval id, None for the next one; the
    decision). ValueError saying why a line is none."""
    if not text.startswith("{"):
        word, _, feedback = text.partition(" ")
        if shorthand and word.lower() in SHORTHAND:
            return None, Decision(SHORTHAND[word.lower()], feedback=feedback.strip() or None)
        raise ValueError(f"expected a JSON decision object or y / a / n [feedback] / s, got {text[:60]!r}")
    try:
        parsed = DecisionLine.model_validate_json(text)
    except ValidationError as exc:
        where, problem = first_problem(exc, "line")
        raise ValueError(f"invalid decision ({where}: {problem})") from None
    return parsed.approval_id, Decision(parsed.decision, parsed.feedback, parsed.rejected_hunks, parsed.edited)


BY_RULE = "an `ask` permission rule asked for this call (such a rule asks in allow mode too)"


def verdict(complete: Complete, approver: StdinApprover, published: bool, printer: Any) -> tuple[int, Complete]:
    """`run`'s exit code and the `complete` its output ends with (in-process and through the host).
    When stdin closed on an approval or a plan (exit code 3) the error saying so is printed, and the
    run is no success: `complete` says `success: false`, `completion_reason: denied`, whatever the
    model answered after the denial."""
    code = exit_code(complete, approver, published, printer)
    if code == UNANSWERED:
        complete = complete.model_copy(update={"success": False, "completion_reason": "denied"})
    return code, complete


def exit_code(complete: Complete, approver: StdinApprover, published: bool, printer: Any) -> int:
    """`run`'s exit code (in-process and through the host): 3 when stdin closed on an approval or a plan."""
    if approver.lines is not None and approver.lines.unanswered:
        printer.handle(ErrorEvent(recoverable=False, message=(
            f"the plan was not run: stdin closed before anyone reviewed it (exit code {UNANSWERED}). "
            'Answer on stdin ({"type": "plan_decision", "decision": "approve"}) or use --mode allow.')))
        return UNANSWERED
    if approver.unanswered:
        count = f"{approver.unanswered} approval{'s' if approver.unanswered != 1 else ''}"
        fix = "Answer on stdin (e.g. `echo y |`) or use --mode allow."
        if approver.by_rules:  # --mode allow would not help: the rule asks in every mode
            fix = ("The run is in allow mode: your `ask` permission rules asked for them, and they ask in every "
                   "mode. Answer on stdin (e.g. `echo y |`), or remove or narrow the rule (/permissions in the app "
                   "lists the rules with their files).")
        printer.handle(ErrorEvent(recoverable=False, message=(
            f"{count} denied because stdin closed before an answer came: what they asked for was not "
            f"done (exit code {UNANSWERED}). {fix}")))
        return UNANSWERED
    return 0 if complete.success and published else 1
