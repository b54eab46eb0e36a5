"""Ask-mode approvals and plan reviews as `session/request_permission` requests.

The client shows the tool call (with the diff of every file an edit would change) and options;
the option it picks becomes our decision. A `cancelled` outcome (the user cancelled the turn)
stops the run.
"""

from __future__ import annotations

import uuid
from typing import Any

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from agent.approval import ApprovalRequest, Decision
from agent.events import DecisionKind
from agent.frontends.acp.events import AcpEvents, diff_content
from agent.frontends.acp.tools import tool_kind, tool_locations, tool_title
from agent.frontends.acp.updates import UpdateStream
from agent.planning.review import PlanDecision, ReviewKind
from agent.textsafe import line as shown_line

APPROVAL_OPTIONS: dict[str, tuple[str, DecisionKind]] = {  # option id -> (kind, our decision)
    "allow_once": ("allow_once", "allow_once"),
    "allow_always": ("allow_always", "allow_all"),
    "reject": ("reject_once", "deny"),
}
REVIEW_OPTIONS: dict[str, list[tuple[str, str, str]]] = {  # kind -> [(option id = decision, kind, name)]
    "review": [("approve", "allow_once", "Run the plan"), ("stop", "reject_once", "Do not run it")],
    "failed_step": [("retry", "allow_once", "Retry the step"), ("skip", "reject_once", "Skip the step"),
                    ("stop", "reject_once", "Stop the plan")],
}


class AcpApprover:
    """The Approver port: one permission request per approval, after the updates before it."""

    def __init__(self, conn: Any, stream: UpdateStream, events: AcpEvents) -> None:
        self.conn = conn
        self.stream = stream
        self.events = events

    async def decide(self, request: ApprovalRequest) -> Decision:
        always = f"Always allow {request.tool}" + (" (not the network)" if request.kind == "exec" else "")
        names = {"allow_once": "Allow", "allow_always": always, "reject": "Reject"}
        options = [PermissionOption(option_id=key, name=names[key], kind=kind)  # type: ignore[arg-type]
                   for key, (kind, _) in APPROVAL_OPTIONS.items()]
        call = ToolCallUpdate(
            tool_call_id=request.call_id, title=_asker(request) + tool_title(request.tool, request.args),
            kind=tool_kind(request.tool, request.kind), status="pending", content=_shown(request, self.events),
            locations=tool_locations(self.events.root, request.tool, request.args) or None,
            raw_input=request.args)
        chosen = await self._ask(call, options)
        if chosen is None:
            return Decision("stop")
        return Decision(APPROVAL_OPTIONS[chosen][1] if chosen in APPROVAL_OPTIONS else "deny")

    async def _ask(self, call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        """The option id the client picked (None: the turn was cancelled)."""
        await self.stream.flush()  # the client knows the tool call before it is asked about it
        response = await self.conn.request_permission(session_id=self.stream.session_id, tool_call=call,
                                                      options=options)
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None


def _shown(request: ApprovalRequest, events: AcpEvents) -> list[Any] | None:
    """What the user decides on: the diffs of an edit, the whole command, the address."""
    if request.changes:
        return [diff_content(events.root, change) for change in request.changes]
    return command_content(request.command, request.args, request.url)


def command_content(command: str | None, args: dict[str, Any], url: str | None) -> list[Any] | None:
    """A command's whole text (and whether it asks for the network) or the address to fetch."""
    lines = []
    if command:
        lines.append(f"```sh\n{command}\n```")
        if args.get("network") is True:
            lines.append("The command asks for network access.")
    if url:
        lines.append(f"Fetch {url}")
    return [tool_content(text_block("\n".join(lines)))] if lines else None


class AcpPlanReviewer(AcpApprover):
    """Plan reviews and failed steps, asked the same way (the plan is in the tool call's text)."""

    async def decide(self, kind: ReviewKind) -> PlanDecision:  # type: ignore[override]
        waiting = self.events.review
        options = [PermissionOption(option_id=key, name=name, kind=option_kind)  # type: ignore[arg-type]
                   for key, option_kind, name in REVIEW_OPTIONS[kind]]
        call_id, title = f"plan-{kind}-{uuid.uuid4().hex[:8]}", _review_title(kind, waiting)
        self.stream.send(start_tool_call(call_id, title, kind="think", status="pending"))
        chosen = await self._ask(ToolCallUpdate(tool_call_id=call_id, title=title, kind="think", status="pending"),
                                 options)
        self.stream.send(update_tool_call(call_id, status="completed" if chosen not in (None, "stop") else "failed"))
        known = {option[0] for option in REVIEW_OPTIONS[kind]}
        return PlanDecision(decision=chosen if chosen in known else "stop")  # type: ignore[arg-type]


def _review_title(kind: ReviewKind, waiting: Any) -> str:
    return shown_line(_plain_review_title(kind, waiting))


def _plain_review_title(kind: ReviewKind, waiting: Any) -> str:
    if waiting is None:
        return "Run the plan?" if kind == "review" else "A step failed"
    if kind == "review":
        steps = "; ".join(f"{i}. {s.title}" for i, s in enumerate(waiting.plan.steps, start=1))
        return f"Run this plan? {waiting.plan.refined_goal}: {steps}"
    step = next((s.title for s in waiting.plan.steps if s.id == waiting.step_id), waiting.step_id)
    return f"Step failed: {step} ({waiting.error or 'no reason given'}). Retry, skip or stop?"


def _asker(request: ApprovalRequest) -> str:
    """A subagent's approval says which child asks, on what task (agent/subagents)."""
    return f"[subagent {shown_line(request.asker)}] " if request.asker else ""
