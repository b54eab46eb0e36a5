"""Ask-mode approvals and plan reviews as `session/request_permission` requests.

The client shows the tool call (with the diff of every file an edit would change) and options;
the option it picks becomes our decision. A `cancelled` outcome (the user cancelled the turn)
stops the run.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from acp import text_block, tool_content
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from agent import events as ev
from agent.approval import ApprovalRequest
from agent.events import DecisionKind
from agent.frontends.acp.events import diff_content
from agent.frontends.acp.tools import tool_kind, tool_locations, tool_title
from agent.planning.review import ReviewKind
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


def approval_call(event: ev.ApprovalRequired, request: ApprovalRequest | None, root: Path | None) -> ToolCallUpdate:
    """The tool call a permission request asks about: with the editor's diff of each change when the
    request is known (a session in this process), else the diffs the event carries."""
    if request is not None and request.changes:
        content: list[Any] | None = [diff_content(root, change) for change in request.changes]
    elif event.files:
        content = [tool_content(text_block(f"```diff\n{f.diff}```")) for f in event.files]
    else:
        content = command_content(event.command, event.args, event.url)
    return ToolCallUpdate(tool_call_id=event.call_id, title=_asker(event.asker) + tool_title(event.tool, event.args),
                          kind=tool_kind(event.tool, event.kind), status="pending", content=content,
                          locations=tool_locations(root, event.tool, event.args) or None, raw_input=event.args)


def approval_options(tool: str, kind: str) -> list[PermissionOption]:
    always = f"Always allow {tool}" + (" (not the network)" if kind == "exec" else "")
    names = {"allow_once": "Allow", "allow_always": always, "reject": "Reject"}
    return [PermissionOption(option_id=key, name=names[key], kind=option_kind)  # type: ignore[arg-type]
            for key, (option_kind, _) in APPROVAL_OPTIONS.items()]


def decision_of(outcome: Any) -> DecisionKind:
    """The decision an approval's permission outcome says (cancelled: the user stopped the turn)."""
    if isinstance(outcome, AllowedOutcome):
        return APPROVAL_OPTIONS[outcome.option_id][1] if outcome.option_id in APPROVAL_OPTIONS else "deny"
    return "stop"


def review_options(kind: ReviewKind) -> list[PermissionOption]:
    return [PermissionOption(option_id=key, name=name, kind=option_kind)  # type: ignore[arg-type]
            for key, option_kind, name in REVIEW_OPTIONS[kind]]


def review_call(event: ev.PlanDecisionRequired) -> ToolCallUpdate:
    call_id, title = f"plan-{event.kind}-{uuid.uuid4().hex[:8]}", _review_title(event.kind, event)
    return ToolCallUpdate(tool_call_id=call_id, title=title, kind="think", status="pending")


def review_decision(kind: ReviewKind, outcome: Any) -> str:
    chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else None
    return chosen if chosen in {option[0] for option in REVIEW_OPTIONS[kind]} else "stop"


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


def _asker(asker: str | None) -> str:
    """A subagent's approval says which child asks, on what task (agent/subagents)."""
    return f"[subagent {shown_line(asker)}] " if asker else ""
