"""Approvals of a fleet job in ask mode: asked in the batch, waited for a bounded time, then parked.

The approval is written to the job (`fleet status` and `fleet approve` show it) and the worker
waits up to `[fleet] approval_wait` seconds for `fleet approve`'s answer. Without one, the job
parks: the run stops (its session record keeps the conversation), the worker takes its next job,
and `fleet approve` later queues the job again with the answer. The resumed session is told what
was answered; when the model makes the same call again, the stored answer decides it at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from agent.approval import ApprovalRequest, Decision
from agent.fleet.model import Answer, Approval
from agent.fleet.store import DIFF_LIMIT, FleetStore

PARKED = "parked: nobody answered in time; `coder-tui fleet approve` resumes this job"


def approval_of(request: ApprovalRequest) -> Approval:
    event = request.to_event()
    diff = "".join(f.diff for f in event.files)
    return Approval(tool=request.tool, summary=request.summary, args=request.args, command=request.command,
                    url=request.url, diff=diff[:DIFF_LIMIT])


def matches(answer: Answer, request: ApprovalRequest) -> bool:
    return answer.tool == request.tool and answer.args == request.args


@dataclass
class JobRef:
    store: FleetStore
    batch: str
    number: int
    attempt: str


class FleetApprover:
    """The approver of a fleet job's session (see the module's docstring)."""

    def __init__(self, job: JobRef, wait: float, answer: Answer | None = None) -> None:
        self.job = job
        self.wait = wait
        self.stored = answer  # the answer a resumed job was queued with
        self.parked: Approval | None = None  # set when the job parked

    async def decide(self, request: ApprovalRequest) -> Decision:
        if self.stored is not None and matches(self.stored, request):
            stored, self.stored = self.stored, None
            return Decision(stored.decision, stored.feedback, by=stored.by or None)
        approval = approval_of(request)
        job = self.job
        answer: Answer | None = await asyncio.to_thread(job.store.wait_for_answer, job.batch, job.number, approval,
                                                        self.wait)
        if answer is None:
            text = f"waits for approval: {approval.what}"
            answer = await asyncio.to_thread(job.store.park, job.batch, job.number, job.attempt, text)
        if answer is None:
            self.parked = approval
            return Decision("stop", feedback=PARKED)
        job.store.update(job.batch, job.number, state="running", approval=None)
        job.store.event(job.batch, job.number, "answered", f"{answer.decision} {approval.tool}"
                                                           + (f" by {answer.by}" if answer.by else ""))
        return Decision(answer.decision, answer.feedback, by=answer.by or None)


def resume_prompt(answer: Answer) -> str:
    """What a parked job's resumed session is told, in place of a new task."""
    what = answer.summary or answer.tool
    if answer.decision == "deny":
        feedback = f" Their feedback: {answer.feedback}" if answer.feedback else ""
        return (f"[fleet] While this job waited, the user denied your request to run {what}.{feedback} "
                "Carry on with the task without it.")
    return (f"[fleet] While this job waited, the user approved your request to run {what}. Make that same "
            "call again now to go ahead, then carry on with the task.")
