"""Approval: the port the loop awaits, and the mode rules around it.

The loop never prompts. For a tool that edits, executes or reaches the network it builds an
`ApprovalRequest` (for edits, with the exact file changes a dry run computed) and awaits
`approver.decide(request)`. The TUI answers from its diff view, headless mode from stdin JSON
lines, tests from a script. A decision may narrow an edit: reject some hunks, or replace a file's
proposed content with a version the user edited.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import Field

from agent.diffing import FileChange, apply_hunks
from agent.events import ApprovalDetails, ApprovalRequired, DecisionKind, FilePreview, Mode


class ApprovalRequest(ApprovalDetails):
    """What the loop asks: the approval's details and, for an edit, the exact file changes
    (the `approval_required` event carries their diffs instead)."""

    changes: list[FileChange] = Field(default_factory=list)
    protected: dict[str, str] = Field(default_factory=dict)  # path -> what the file is to coder-tui

    def to_event(self) -> ApprovalRequired:
        files = [FilePreview(path=c.path, diff=c.unified_diff(), hunks=len(c.hunks()), created=c.created,
                             deleted=c.deleted, protected=self.protected.get(c.path)) for c in self.changes]
        details = {name: getattr(self, name) for name in ApprovalDetails.model_fields}
        return ApprovalRequired(**details, files=files)


@dataclass
class Decision:
    decision: DecisionKind
    feedback: str | None = None
    # path -> indices of hunks the user rejected (only edits; all others are applied)
    rejected_hunks: dict[str, list[int]] = field(default_factory=dict)
    # path -> full replacement content the user wrote in place of the proposal
    edited: dict[str, str] = field(default_factory=dict)
    by: str | None = None  # who answered, when not the front end's own user (a room peer)

    @property
    def allows(self) -> bool:
        return self.decision in ("allow_once", "allow_all")


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> Decision: ...


class StopRun(Exception):
    """The user chose to stop the run."""


class DenyAll:
    """An approver for contexts with nobody to ask: everything is denied, with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision("deny", feedback=self.reason)


class ScriptedApprover:
    """Answers approvals from a list of decisions in order (tests, automation)."""

    def __init__(self, decisions: list[Decision]) -> None:
        self.decisions = list(decisions)
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        if not self.decisions:
            return Decision("deny", feedback="no scripted decision left")
        return self.decisions.pop(0)


class QueueApprover:
    """Approvals answered from outside by id (headless stdin, the TUI's bridge).

    `decide` parks a future under the approval id; `resolve(approval_id, decision)` completes
    it. `close(reason)` denies everything pending and everything asked afterwards.
    """

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[Decision]] = {}
        self._closed_reason: str | None = None

    @property
    def pending(self) -> list[str]:
        return list(self._pending)

    @property
    def closed_reason(self) -> str | None:
        """Why approvals are denied from now on (None while answers can still come)."""
        return self._closed_reason

    async def decide(self, request: ApprovalRequest) -> Decision:
        if self._closed_reason is not None:
            return Decision("deny", feedback=self._closed_reason)
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._pending[request.approval_id] = future
        try:
            return await future
        finally:
            self._pending.pop(request.approval_id, None)

    def resolve(self, approval_id: str, decision: Decision) -> bool:
        future = self._pending.get(approval_id)
        if future is None or future.done():
            return False
        future.set_result(decision)
        return True

    def close(self, reason: str) -> None:
        self._closed_reason = reason
        for future in list(self._pending.values()):
            if not future.done():
                future.set_result(Decision("deny", feedback=reason))


class ApprovalGate:
    """Mode rules: plan blocks, ask asks (remembering allow_all per tool), allow runs."""

    def __init__(self, mode: Mode, approver: Approver) -> None:
        self.mode: Mode = mode
        self.approver = approver
        self.allowed_tools: set[str] = set()
        self._network_once: list[tuple[str, str]] = []  # (tool, command) approved with network asked

    def needs_approval(self, tool: str, network: bool = False) -> bool:
        """Ask mode asks unless the tool is allowed for the session; a command that asks for the
        network is asked for every time (allowing a tool for the session never grants the network)."""
        return self.mode == "ask" and (tool not in self.allowed_tools or network)

    def revoke(self, tool: str | None = None) -> list[str]:
        """Ask again before `tool` (every tool when None) runs; returns the tools revoked."""
        revoked = sorted(self.allowed_tools if tool is None else self.allowed_tools & {tool})
        self.allowed_tools.difference_update(revoked)
        return revoked

    async def ask(self, request: ApprovalRequest) -> Decision:
        decision = await self.approver.decide(request)
        if decision.decision == "allow_all":
            self.allowed_tools.add(request.tool)
        if decision.decision == "allow_once" and request.args.get("network") is True:
            # only "allow once" grants the network the command asked for; "allow for the session"
            # says "without network" and means it, for this command too
            self._network_once.append((request.tool, str(request.args.get("command") or "")))
        return decision

    def network_allowed(self, tool: str, command: str) -> bool:
        """Whether the user let this command that asked for the network have it: approved when
        asked, used once. Allowing the tool for the session does not grant it, and allow mode never
        asks, so it never grants the network (config's `sandbox_network` does)."""
        if (tool, command) in self._network_once:
            self._network_once.remove((tool, command))
            return True
        return False


def narrow_changes(changes: list[FileChange], decision: Decision) -> tuple[list[FileChange], list[str]]:
    """Apply a decision's hunk rejections and in-place edits to proposed changes.

    Returns the changes to apply (files left unchanged are dropped) and notes for the model
    describing what the user altered.
    """
    result: list[FileChange] = []
    notes: list[str] = []
    for change in changes:
        if change.path in decision.edited:
            content = decision.edited[change.path]
            notes.append(f"{change.path}: the user edited the proposed content before applying it")
            result.append(FileChange(change.path, change.old, content, change.reason))
            continue
        rejected = set(decision.rejected_hunks.get(change.path, []))
        total = len(change.hunks())
        if not rejected:
            result.append(change)
            continue
        kept = set(range(total)) - rejected
        names = ", ".join(str(i + 1) for i in sorted(rejected))
        if not kept or change.old is None or change.new is None:
            notes.append(f"{change.path}: the user rejected this change (hunks {names} of {total})")
            continue
        notes.append(f"{change.path}: the user rejected hunk(s) {names} of {total}; the rest was applied")
        result.append(FileChange(change.path, change.old, apply_hunks(change.old, change.new, kept), change.reason))
    return result, notes
