"""Our events as ACP `session/update` notifications: text chunks, tool calls, diffs and plans."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import (plan_entry, update_user_message_text, start_tool_call, text_block, tool_content, tool_diff_content, update_agent_message_text,
                 update_agent_thought_text, update_plan, update_tool_call)
from acp.schema import PlanEntry, PlanEntryStatus

from agent import events as ev
from agent.consumer import EventHandler
from agent.diffing import FileChange
from agent.frontends.acp.tools import absolute, tool_kind, tool_locations, tool_title
from agent.frontends.acp.updates import UpdateStream
from agent.frontends.common import TurnText
from agent.textsafe import line as shown_line

DECIDED = {"allow_once": "allowed", "allow_all": "allowed for the session", "deny": "rejected", "stop": "stopped"}

OUTPUT_SHOWN = 8_000  # characters of a tool's output shown in the editor (the model reads it all)
TODO_STATUS: dict[str, PlanEntryStatus] = {"pending": "pending", "in_progress": "in_progress",
                                           "completed": "completed", "cancelled": "completed"}
STEP_STATUS: dict[str, PlanEntryStatus] = {"pending": "pending", "in_progress": "in_progress", "done": "completed",
                                           "failed": "pending", "skipped": "completed"}
STEP_MARK = {"failed": " (failed)", "skipped": " (skipped)"}


class AcpEvents(EventHandler):
    """Maps one session's events onto its update stream; `problem` keeps a run's fatal error."""

    def __init__(self, stream: UpdateStream, root: Path | None, approval_kind: Callable[[str], str | None]) -> None:
        self.stream = stream
        self.root = root
        self.approval_kind = approval_kind
        self.applied: list[FileChange] = []  # what the current tool call wrote (EditorWorkspace.on_applied)
        self.asked: dict[str, str] = {}  # approval id -> call id
        self.todos: list[ev.TodoItem] = []
        self.steps: list[ev.PlanStepInfo] = []  # the structured workflow's plan
        self.problem: str | None = None  # a fatal error of the current run
        self.review: ev.PlanDecisionRequired | None = None  # the plan decision waiting, if any
        self.turns = TurnText()
        self.children: dict[str, ev.SubagentUpdate] = {}  # the running subagents' latest state

    def changes_written(self, changes: list[FileChange]) -> None:
        self.applied.extend(changes)

    # -- text ---------------------------------------------------------------------------
    def on_run_started(self, event: ev.RunStarted) -> None:
        self.turns.run()

    def on_step_started(self, event: ev.StepStarted) -> None:
        self.turns.step()

    def on_text_delta(self, event: ev.TextDelta) -> None:
        self.stream.send(update_agent_message_text(self.turns.text(event.text)))

    def on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        self.stream.send(update_agent_thought_text(event.text))

    def note(self, text: str) -> None:
        self.stream.send(update_agent_message_text(f"\n\n> {text}\n\n"))

    def on_warning(self, event: ev.WarningEvent) -> None:
        self.note(f"⚠ {event.message}")

    def on_error(self, event: ev.ErrorEvent) -> None:
        if event.recoverable:
            self.note(f"⚠ {event.message}")
        else:  # the prompt's response carries it (a JSON-RPC error the editor shows as such)
            self.problem = event.message

    def on_retrying(self, event: ev.Retrying) -> None:
        self.stream.send(update_agent_thought_text(f"{event.why}; retrying in {event.delay:.0f} s "
                                                   f"(attempt {event.attempt})\n"))

    def on_model_fallback(self, event: ev.ModelFallback) -> None:
        self.note(f"{event.from_model} failed ({event.reason}); {event.to_model} takes over")

    def on_compacted(self, event: ev.Compacted) -> None:
        self.stream.send(update_agent_thought_text(
            f"Older turns were summarised to fit the context window ({event.tokens_before} → "
            f"{event.tokens_after} tokens).\n"))

    def on_mcp_server(self, event: ev.McpServerState) -> None:
        if event.state == "failed":
            self.note(f"MCP server {event.server} failed: {event.message}")

    def on_complete(self, event: ev.Complete) -> None:
        if event.completion_reason in ("max_steps", "budget"):
            self.note(event.final_response.strip().split("\n\n")[-1])

    # -- tool calls -----------------------------------------------------------------------
    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        self.applied = []
        approval = self.approval_kind(event.tool)
        title = tool_title(event.tool, event.args) if "_raw" not in event.args else f"{event.tool} (unusable arguments)"
        self.stream.send(start_tool_call(
            event.call_id, title, kind=tool_kind(event.tool, approval),
            status="in_progress" if approval == "read" else "pending",
            locations=tool_locations(self.root, event.tool, event.args) or None, raw_input=event.args))

    def on_approval_required(self, event: ev.ApprovalRequired) -> None:
        self.asked[event.approval_id] = event.call_id

    # a subagent is the parent's `agent` tool call: its progress updates that call, naming the child
    def on_subagent_started(self, event: ev.SubagentStarted) -> None:
        self.stream.send(update_tool_call(event.call_id, title=f"subagent {event.agent}: {shown_line(event.task)[:80]}",
                                          status="in_progress", raw_output=event.model_dump(mode="json")))

    def on_subagent_update(self, event: ev.SubagentUpdate) -> None:
        self.children[event.child_id] = event
        doing = "waiting for you: " if event.status == "waiting" else (f"{event.tool} " if event.tool else "")
        cost = f", ${event.cost:.4f}" if event.cost is not None else ""
        self.stream.send(update_tool_call(event.call_id, content=[tool_content(text_block(
            f"subagent {event.child_id}: {doing}{shown_line(event.detail)[:100]} ({event.tokens:,} tokens{cost})"))]))

    def on_subagent_finished(self, event: ev.SubagentFinished) -> None:
        self.children.pop(event.child_id, None)
        self.stream.send(update_tool_call(event.call_id, raw_output=event.model_dump(mode="json")))

    def on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        call_id = self.asked.pop(event.approval_id, None)
        if call_id is not None and event.decision in ("allow_once", "allow_all"):
            self.stream.send(update_tool_call(call_id, status="in_progress"))

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        content: list[Any] = [diff_content(self.root, c) for c in self.applied]
        shown = event.output if event.ok else event.error
        if not content and shown:
            if len(shown) > OUTPUT_SHOWN:
                shown = shown[:OUTPUT_SHOWN] + f"\n[… {len(shown) - OUTPUT_SHOWN:,} more characters]"
            content = [tool_content(text_block(shown))]
        self.applied = []
        self.stream.send(update_tool_call(event.call_id, status="completed" if event.ok else "failed",
                                          content=content or None))

    # -- plans ----------------------------------------------------------------------------
    def on_plan_updated(self, event: ev.PlanUpdated) -> None:
        self.todos = list(event.todos)
        self.send_plan()

    def on_plan_created(self, event: ev.PlanCreated) -> None:
        self.steps = list(event.plan.steps)
        self.send_plan()

    def on_plan_decision_required(self, event: ev.PlanDecisionRequired) -> None:
        self.review = event

    def on_step_start(self, event: ev.StepStart) -> None:
        self._step_status(event.step_id, "in_progress")

    def on_step_complete(self, event: ev.StepComplete) -> None:
        self._step_status(event.step_id, event.status)

    def _step_status(self, step_id: str, status: Any) -> None:
        self.steps = [s.model_copy(update={"status": status}) if s.id == step_id else s for s in self.steps]
        self.send_plan()

    def send_plan(self) -> None:
        self.stream.send(update_plan(plan_entries(self.steps, self.todos)))


def plan_entries(steps: list[ev.PlanStepInfo], todos: list[ev.TodoItem]) -> list[PlanEntry]:
    """The structured plan's steps, then the todo list (a step's own checklist, or the only plan)."""
    entries = [plan_entry(shown_line(s.title) + STEP_MARK.get(s.status, ""), priority="high",
                          status=STEP_STATUS[s.status]) for s in steps]
    entries += [plan_entry(shown_line(t.content) + (" (cancelled)" if t.status == "cancelled" else ""),
                           status=TODO_STATUS[t.status]) for t in todos]
    return entries


def diff_content(root: Path | None, change: FileChange) -> Any:
    path = absolute(root, change.path) if root is not None else change.path
    return tool_diff_content(path, change.new or "", change.old)


@functools.cache
def _builtin_kinds() -> dict[str, str]:
    from agent.tools import default_tools

    return {tool.name: tool.kind for tool in default_tools()}


def builtin_kind(name: str) -> str | None:
    """A tool's approval kind without the session's registry: built-ins, MCP's network."""
    return "network" if name.startswith("mcp__") else _builtin_kinds().get(name)


class HandleEvents(AcpEvents):
    """AcpEvents for a session driven through its handle, whichever front end runs its turns:
    `mine` says whether the running turn was prompted here (its prompt is on the editor's screen
    already; another front end's becomes a user message chunk). A tool call's diffs come as the
    editor's applied changes (this process) or as `file_changed` events (the host wrote them)."""

    def __init__(self, stream: UpdateStream, root: Path | None, approval_kind: Callable[[str], str | None]) -> None:
        super().__init__(stream, root, approval_kind)
        self.mine = False
        self.texted = False  # the run streamed text
        self.diffs: dict[str, list[str]] = {}  # call id -> the diffs of the files it changed
        self.titles: dict[str, str] = {}  # call id -> its title (said again with who answered its approval)
        self._call: str | None = None

    def on_run_started(self, event: ev.RunStarted) -> None:
        super().on_run_started(event)
        self.texted = False
        if not self.mine and event.prompt.strip():
            from agent.frontends.acp.prompt import typed_part

            self.stream.send(update_user_message_text(typed_part(event.prompt)))

    def on_text_delta(self, event: ev.TextDelta) -> None:
        self.texted = self.texted or bool(event.text)
        super().on_text_delta(event)

    def on_complete(self, event: ev.Complete) -> None:
        super().on_complete(event)
        if not self.texted and event.completion_reason == "answered" and event.final_response.strip():
            self.stream.send(update_agent_message_text(self.turns.text(event.final_response)))

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        super().on_tool_call(event)
        self._call = event.call_id
        self.titles[event.call_id] = shown_line(event.tool)  # replaced by the approval's title when one is asked

    def on_file_changed(self, event: ev.FileChanged) -> None:
        if self._call is not None:
            self.diffs.setdefault(self._call, []).append(event.diff)

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        self._call = None
        diffs = self.diffs.pop(event.call_id, [])
        if not diffs or self.applied:
            super().on_tool_result(event)
            return
        shown = [f"```diff\n{diff}```"[: OUTPUT_SHOWN] for diff in diffs]
        self.stream.send(update_tool_call(event.call_id, status="completed" if event.ok else "failed",
                                          content=[tool_content(text_block(s)) for s in shown]))

    def answered(self, call_id: str, decision: str, by: str) -> None:
        """The tool call says who answered its approval (any front end of the session)."""
        title = self.titles.get(call_id, "tool call")
        self.stream.send(update_tool_call(call_id, title=f"{title} ({DECIDED.get(decision, decision)} by "
                                                         f"{shown_line(by)})"))
