"""The agent's events as seed 002's SSE data objects (and what an editor needs beyond the seed).

Seed shapes: `{"content"}` for text, `{"type": "diff", "file", "diff", "line_start", "line_end",
"reason"}` for a file change, `{"type": "classification", "task_type"}` (seed 002's task types, first
in every turn; the structured workflow's router adds `intent`, ours), `{"error"}`, and the
server's own `{"done": true}` last. Beyond the seed: the session (first), approvals, tool calls
and results, the structured workflow's plan and steps (issue 11's field names), todos, warnings
and how the run completed. Events an editor has no use for (usage, checkpoints, retries) are not
sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent import events as ev
from agent.consumer import EventHandler
from agent.frontends.common import TurnText
from agent.textsafe import visible

Data = dict[str, Any]


class SseMapper(EventHandler):
    """Turns each event into zero or one SSE data object handed to `send`."""

    def __init__(self, send: Callable[[Data], None], newline: Callable[[str], str] = lambda path: "\n",
                 category: str = "other") -> None:
        self.send = send
        self.category = category  # seed 002's task type of the request (agent/planning/seedtypes.py)
        self.newline = newline  # path -> the line end the file uses
        self.turns = TurnText()
        self.session_id = ""  # the running session's, for the plan decision's address

    def on_run_started(self, event: ev.RunStarted) -> None:
        self.turns.run()
        self.session_id = event.session_id

    def on_step_started(self, event: ev.StepStarted) -> None:
        self.turns.step()

    def on_text_delta(self, event: ev.TextDelta) -> None:
        if event.text:
            self.send({"content": self.turns.text(event.text)})

    def on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        if event.text:
            self.send({"type": "reasoning", "content": event.text})

    def on_file_changed(self, event: ev.FileChanged) -> None:
        self.send(diff_data(event, self.newline(event.path)))

    def on_classification(self, event: ev.ClassificationEvent) -> None:
        # the router's verdict refines the request's classification: seed 002's task type, and ours
        self.send({"type": "classification", "task_type": self.category, "intent": event.task_type})

    def on_error(self, event: ev.ErrorEvent) -> None:
        self.send({"error": event.message, "recoverable": event.recoverable})

    def on_warning(self, event: ev.WarningEvent) -> None:
        self.send({"type": "warning", "message": event.message})

    def on_approval_required(self, event: ev.ApprovalRequired) -> None:
        # A client that knows only seed 002 shows content: this says what waits and how to answer.
        self.send({"content": self.turns.block(approval_note(event))})
        self.send(approval_data(event))

    def on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        self.send({"type": "approval_resolved", "id": event.approval_id, "decision": event.decision})

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        self.send({"type": "tool_call", "id": event.call_id, "tool": event.tool, "args": event.args})

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        # the failure goes under `detail`: a seed client takes any object with `error` for the turn's error
        self.send({"type": "tool_result", "id": event.call_id, "tool": event.tool, "ok": event.ok,
                   "detail": event.error})

    def on_plan_updated(self, event: ev.PlanUpdated) -> None:
        self.send({"type": "todos", "todos": [t.model_dump(mode="json") for t in event.todos]})

    # the structured workflow (issue 11): its events are wire format already
    def on_plan_created(self, event: ev.PlanCreated) -> None:
        self.send(event.model_dump(mode="json"))

    def on_plan_decision_required(self, event: ev.PlanDecisionRequired) -> None:
        # As for approvals: a seed-only client shows content, so it says what waits and how to answer.
        self.send({"content": self.turns.block(plan_note(event, self.session_id))})
        self.send(event.model_dump(mode="json"))

    def on_step_start(self, event: ev.StepStart) -> None:
        self.send(event.model_dump(mode="json"))

    def on_agent_action(self, event: ev.AgentAction) -> None:
        self.send(event.model_dump(mode="json"))

    def on_step_complete(self, event: ev.StepComplete) -> None:
        self.send(event.model_dump(mode="json"))

    def on_published(self, event: ev.Published) -> None:
        self.send(event.model_dump(mode="json"))

    def on_file_ready(self, event: ev.FileReady) -> None:
        self.send(event.model_dump(mode="json"))

    # subagents (agent/subagents): wire format already, each naming the child and its parent
    def on_subagent_started(self, event: ev.SubagentStarted) -> None:
        self.send(event.model_dump(mode="json"))

    def on_subagent_update(self, event: ev.SubagentUpdate) -> None:
        self.send(event.model_dump(mode="json"))

    def on_subagent_finished(self, event: ev.SubagentFinished) -> None:
        self.send(event.model_dump(mode="json"))

    def on_goal_round(self, event: ev.GoalRound) -> None:
        self.send(event.model_dump(mode="json"))

    def on_complete(self, event: ev.Complete) -> None:
        self.send({"type": "complete", "success": event.success, "completion_reason": event.completion_reason})


def diff_data(event: ev.FileChanged, newline: str = "\n") -> Data:
    """Seed 002's diff event; `newline` is the file's own line end, so that `git apply` and
    `patch` take the diff of a CRLF file (the core's diffs compare text with "\n" line ends)."""
    return {"type": "diff", "file": event.path, "diff": with_newline(event.diff, newline),
            "line_start": event.line_start, "line_end": event.line_end, "reason": event.reason}


def with_newline(diff: str, newline: str) -> str:
    """The diff's context, removed and added lines end with `newline`; its header lines keep "\n"."""
    if newline == "\n":
        return diff
    lines = diff.splitlines(keepends=True)
    return "".join(line[:-1] + newline if line[:1] in " +-" and not line.startswith(("--- ", "+++ "))
                   and line.endswith("\n") else line for line in lines)


ANSWER = ('POST /api/approvals/{id} with {{"decision": "allow_once"}} (or "allow_all", "deny", "stop"); '
          "start `coder-tui serve --mode allow` to run without approvals")


def approval_note(event: ev.ApprovalRequired) -> str:
    what = event.summary or event.tool
    if event.files:
        what = f"{event.tool} on {', '.join(f.path for f in event.files)}"
    elif event.command:
        what = f"run `{event.command}`"
    elif event.url:
        what = f"fetch {event.url}"
    return f"[waiting for approval: {what}. To answer, {ANSWER.format(id=event.approval_id)}.]"


def plan_note(event: ev.PlanDecisionRequired, session_id: str) -> str:
    """What a plan review (or a failed step) waits for, and the request that answers it."""
    address = f"POST /api/sessions/{session_id}/plan"
    if event.kind == "review":
        steps = "; ".join(f"{n}. {visible(s.title)}" for n, s in enumerate(event.plan.steps, 1))
        what = f"review of the plan \"{visible(event.plan.refined_goal)}\" ({steps})"
        answer = (f'{address} with {{"decision": "approve"}} (or "feedback" with "feedback": TEXT, "edit" '
                  'with "steps", "stop")')
    else:
        failed = next((s.title for s in event.plan.steps if s.id == event.step_id), event.step_id or "a step")
        error = f": {visible(event.error)}" if event.error else ""
        what = f"a decision on the failed step \"{visible(failed)}\"{error}"
        answer = f'{address} with {{"decision": "retry"}} (or "skip", "stop")'
    return (f"[waiting for {what}. To answer, {answer}; start `coder-tui serve --mode allow` to run plans "
            "without review.]")


def approval_data(event: ev.ApprovalRequired) -> Data:
    data: Data = {"type": "approval_required", "id": event.approval_id, "tool": event.tool,
                  "kind": event.kind, "summary": visible(event.summary)}  # a client's title: shown, not acted on
    if event.kind == "edit":
        data["reason"] = str(event.args.get("reason") or "")
    if event.files:
        data["files"] = [{"file": f.path, "diff": f.diff, "hunks": f.hunks, "created": f.created,
                          "deleted": f.deleted, **({"protected": f.protected} if f.protected else {})}
                         for f in event.files]
    if event.command is not None:
        data["command"] = event.command
        data["cwd"] = event.cwd
    if event.url is not None:
        data["url"] = event.url
    if event.child_id is not None:  # a subagent asks, through its parent: who, and on what task
        data.update(child_id=event.child_id, parent_id=event.parent_id, asker=visible(event.asker or ""))
    return data
