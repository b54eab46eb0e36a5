"""Proposals in the room's chat: the agent's edits and commands shown to the room before they land.

`RoomApprovals` wraps the session's own approver (the app's panel, `coder-tui room`'s stdin). Each
approval is posted to the chat as a numbered proposal (what, the diff, how to answer) and asked
of the local approver at the same time; the first answer wins, the other is withdrawn, and the
chat says who answered. Peers answer with `@agent yes [N]` or `@agent no [N] <feedback>` (the
oldest waiting proposal without N); only the peers the operator allowed (`[room] approvers`,
`--approver NAME`; none by default) may, and the others get one reply saying who may.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.approval import Decision
from agent.textsafe import line, visible

if TYPE_CHECKING:
    from agent.approval import ApprovalRequest, Approver
    from agent.oct.client import RoomClient
    from agent.oct.status import PeerStatus

MAX_DIFF_LINES = 40
LOCAL = "the person running coder-tui"
_ANSWER = re.compile(r"^(yes|no)\b[\s,.:;!]*(?:#?(\d+)\b)?[\s,.:;!-]*(.*)$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Answer:
    allow: bool
    number: int | None = None
    feedback: str = ""


def parse_answer(prompt: str) -> Answer | None:
    """`yes [N]` / `no [N] [feedback]` (what follows `@agent` in a chat message); None: not an answer."""
    match = _ANSWER.match(prompt.strip())
    if match is None:
        return None
    word, number, rest = match.groups()
    return Answer(word.lower() == "yes", int(number) if number else None, rest.strip())


def may_approve(peer: PeerStatus | None, approvers: list[str]) -> bool:
    """Whether `peer` is one of `approvers` (names or emails as the room shows them; "*": anyone)."""
    if peer is None:
        return False
    if "*" in approvers:
        return True
    names = {peer.name.casefold(), *([peer.email.casefold()] if peer.email else [])}
    return any(entry.casefold() in names for entry in approvers if entry)


def _what(request: ApprovalRequest) -> list[str]:
    if request.changes:
        lines: list[str] = []
        for change in request.changes:
            verb = "create" if change.created else "delete" if change.deleted else "edit"
            lines.append(f"{verb} {line(change.path)}")
            lines += visible(change.unified_diff()).rstrip("\n").splitlines()
        return lines
    if request.command:
        network = " (with network access)" if request.args.get("network") is True else ""
        return [f"run `{line(request.command)}` in {line(request.cwd or '.')}{network}"]
    if request.url:
        return [f"fetch {line(request.url)}"]
    return [f"use {request.tool}" + (f": {line(request.summary)}" if request.summary else "")]


def proposal_message(number: int, request: ApprovalRequest, name: str) -> str:
    """The chat message of a proposal: what, the diff (trimmed with a count when long), how to answer."""
    body = _what(request)
    if len(body) > MAX_DIFF_LINES:
        body = body[:MAX_DIFF_LINES] + [f"… {len(body) - MAX_DIFF_LINES} more lines not shown"]
    head = f"Proposal {number} from @{name}, waiting for approval: {line(request.summary) or request.tool}"
    how = f"Answer with @{name} yes, or @{name} no <feedback> (to name this one: @{name} yes {number})"
    return "\n".join([head, *body, how])


def outcome_message(number: int, decision: Decision) -> str:
    who = line(decision.by) if decision.by else LOCAL
    verb = {"allow_once": "approved", "allow_all": "approved (for the session)", "deny": "declined",
            "stop": "declined (and the run stopped)"}[decision.decision]
    # a peer's feedback is in the chat already; the operator's stays between them and the model
    feedback = f": {line(decision.feedback)}" if decision.feedback and decision.by and decision.decision == "deny" else ""
    return f"Proposal {number} {verb} by {who}{feedback}."


@dataclass(eq=False)
class _Pending:
    number: int
    answer: asyncio.Future[Decision]
    local: asyncio.Future[Decision] | None = None
    answered: bool = False  # decided (by the room, or locally), or withdrawn


class RoomApprovals:
    """The local approver and the room's allowed peers, asked at once: the first answer wins."""

    def __init__(self, local: Approver, client: RoomClient, name: str, approvers: Callable[[], list[str]]) -> None:
        self.local, self.client, self.name, self.approvers = local, client, name, approvers
        self.pending: list[_Pending] = []
        self._numbers = itertools.count(1)

    async def decide(self, request: ApprovalRequest) -> Decision:
        item = _Pending(next(self._numbers), asyncio.get_running_loop().create_future())
        self.pending.append(item)
        self.client.send_chat(proposal_message(item.number, request, self.name))
        item.local = asyncio.ensure_future(self.local.decide(request))
        try:
            decision = await self._first(item)
        except asyncio.CancelledError:
            self.client.send_chat(f"Proposal {item.number} withdrawn: the run stopped.")
            raise
        finally:
            item.answered = True
            self.pending.remove(item)
            if not item.local.done():  # the room answered first: withdraw the local question
                item.local.cancel()
                await asyncio.gather(item.local, return_exceptions=True)
        self.client.send_chat(outcome_message(item.number, decision))
        return decision

    async def _first(self, item: _Pending) -> Decision:
        assert item.local is not None
        await asyncio.wait({item.local, item.answer}, return_when=asyncio.FIRST_COMPLETED)
        if item.answer.done():
            return item.answer.result()
        decision = item.local.result()
        if self._local_gone(decision) and self.approvers():
            return await item.answer  # nobody can answer locally (stdin closed): the room decides
        return decision

    def _answered_locally(self, item: _Pending) -> bool:
        """The local answer came first (its task has not resumed `decide` yet)."""
        local = item.local
        if local is None or not local.done() or local.cancelled() or local.exception() is not None:
            return False
        return not self._local_gone(local.result())

    def _local_gone(self, decision: Decision) -> bool:
        reason = getattr(self.local, "closed_reason", None)
        return decision.decision == "deny" and reason is not None and decision.feedback == reason

    # -- answers from the chat ----------------------------------------------------------------
    def answer(self, origin: str, prompt: str, direct: bool) -> bool:
        """Take a chat message's prompt as an answer; False when it is not one (a prompt for the agent)."""
        parsed = parse_answer(prompt)
        if parsed is None:
            return False

        def reply(text: str) -> None:
            self.client.send_chat(text, to=origin if direct else None)

        peer = next((p for p in self.client.status.everyone() if p.id == origin), None)
        who = line(peer.name) if peer is not None and peer.name else "someone"
        approvers = self.approvers()
        if not may_approve(peer, approvers):
            reply(f"{who}: {self._who_may(approvers)}")
            return True
        waiting = [item for item in self.pending if not item.answered and not self._answered_locally(item)]
        if parsed.number is not None:
            chosen = next((item for item in waiting if item.number == parsed.number), None)
        else:
            chosen = waiting[0] if waiting else None
        if chosen is None:
            numbers = ", ".join(str(item.number) for item in waiting)
            reply(f"{who}: " + (f"no proposal {parsed.number} is waiting (waiting: {numbers})." if numbers
                                else "nothing is waiting for approval."))
            return True
        chosen.answered = True
        name = peer.name if peer is not None and peer.name else "someone"
        chosen.answer.set_result(Decision("allow_once", by=name) if parsed.allow
                                 else Decision("deny", feedback=parsed.feedback or None, by=name))
        return True

    def _who_may(self, approvers: list[str]) -> str:
        if not approvers:
            return (f"only {LOCAL} may answer proposals in this room (they can allow peers with "
                    "`approvers = [...]` under [room] in their config.toml, or `--approver NAME`).")
        if "*" in approvers:
            return "only peers of this room may answer proposals."
        return f"only {', '.join(line(a) for a in approvers)} may answer proposals in this room."
