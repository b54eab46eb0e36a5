"""Events in, widgets updated: the one place that knows how each agent event looks in the app.

The agent loop runs on the app's own event loop, so the session's sink calls `handle` directly;
text deltas only append to a buffer (the transcript flushes it at most 20 times a second).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agent import events as ev
from agent.consumer import EventHandler
from agent.lsp.report import shown_lines
from agent.textsafe import line, shown_copy
from agent.tools.textutil import line_count
from tui.toolresult import decision_notes, shown_result
from tui.widgets.scratchpad import show_scratchpad
from tui.widgets.statusbar import LOADING_MODELS, StatusBar
from tui.widgets.timeline import Timeline
from tui.widgets.transcript import Transcript

OUTCOMES = {
    "answered": "✓ done", "max_steps": "■ stopped at the step limit", "stopped": "■ stopped",
    "error": "✗ failed", "budget": "■ stopped: budget spent", "denied": "✗ approvals denied",
}
QUIET_TOOLS = {"todo_write", "todo_read"}  # shown on the timeline, not as rows in the chat


class Presenter(EventHandler):
    """Each event's look in the app: `handle(event)` calls the method of the event's class."""

    def __init__(self, transcript: Transcript, timeline: Timeline, status: StatusBar,
                 key_argument: Callable[[str, dict[str, Any]], str]) -> None:
        self.transcript, self.timeline, self.status = transcript, timeline, status
        self.key_argument = key_argument
        self.on_files_changed: Callable[[Any, bool], None] = lambda event, approved: None
        self.on_run_start: Callable[[Any], None] = lambda event: None
        self.on_run_end: Callable[[Any], None] = lambda event: None
        self.on_room: Callable[[Any], None] = lambda event: None
        self.on_restored: Callable[[Any], None] = lambda event: None  # the files went back to a checkpoint
        self.title: str | None = None  # what the next run_started shows on the timeline
        self.running_tool: dict[str, str] = {}  # call id -> tool name
        self.approved: set[str] = set()  # call ids whose change the user saw and approved
        self.asking = ""  # the call id of the approval on screen
        self.asking_tool = ""
        self.asking_kind = ""
        self.decided: dict[str, str] = {}  # call id -> how the user's answer reads on its finished row
        self.login_url = ""

    def handle(self, event: ev.Event) -> None:
        """Each event shown with its control and bidi characters made visible (agent/textsafe.py):
        an escape sequence in a command, a diff or the model's text must not act on the screen."""
        super().handle(shown_copy(event))

    # -- a run ----------------------------------------------------------------------------
    def on_run_started(self, event: ev.RunStarted) -> None:
        from agent.llm.preload import litellm_loading

        self.status.set_model(event.model)
        # A model on the litellm path: its first request waits for litellm to load (the first seconds only).
        self.status.set_state("thinking", LOADING_MODELS if litellm_loading() else "")
        self.timeline.start_run(self.title or event.prompt)
        self.title = None
        self.on_run_start(event)

    def on_step_started(self, event: ev.StepStarted) -> None:
        self.status.set_state("thinking", f"step {event.iteration}" if event.iteration > 1 else "")

    def on_text_delta(self, event: ev.TextDelta) -> None:
        if self.status.state != "writing":
            self.status.set_state("writing")
        self.transcript.text(event.text)

    def on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        if self.status.state != "thinking":
            self.status.set_state("thinking")
        self.transcript.reasoning(event.text)

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        key = self.key_argument(event.tool, event.args)
        self.running_tool[event.call_id] = event.tool
        if event.tool not in QUIET_TOOLS:
            self.transcript.tool_call(event.call_id, event.tool, key)
            self.timeline.trace(event.call_id, event.tool, key)
        self.status.set_state("running", event.tool)

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        self.running_tool.pop(event.call_id, None)
        self.status.set_state("thinking")
        if event.tool in QUIET_TOOLS:
            if event.ok:
                return
            self.transcript.tool_call(event.call_id, event.tool, "")  # a failed plan update is worth a line
        body = event.output if event.ok else (event.error or "failed")
        shown = shown_result(event.tool, event.ok, body or "", self.decided.pop(event.call_id, ""))
        self.transcript.tool_result(event.call_id, shown.ok, body or "", event.duration, shown.note, shown.preview)
        self.timeline.trace_done(event.call_id, shown.ok)

    def on_approval_required(self, event: ev.ApprovalRequired) -> None:
        self.asking, self.asking_tool, self.asking_kind = event.call_id, event.tool, event.kind
        who = f"waiting for approval · subagent {event.asker}" if event.asker else "waiting for approval"
        self.transcript.note_row(event.call_id, who)
        self.status.set_state("waiting for approval", event.tool)

    def on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        call_id = self.asking
        if event.decision in ("allow_once", "allow_all"):
            self.approved.add(call_id)
        note, self.decided[call_id] = decision_notes(event.decision, event.feedback, event.rejected_hunks,
                                                     event.edited_files)
        if event.by:  # a room peer answered in the room's chat: said while it runs and on its row
            by = f"by {line(event.by)} in the room chat"
            note, done = f"{note} · {by}", self.decided[call_id]
            self.decided[call_id] = f"{done} · {by}" if done else by
        self.transcript.note_row(call_id, note)
        self.status.set_state("running", self.running_tool.get(call_id, ""))
        if event.decision == "allow_all" and self.asking_tool not in self.status.allowances:
            self.status.set_allowances([*self.status.allowances, self.asking_tool])
            network = " A command that asks for the network still asks." if self.asking_kind == "exec" else ""
            self.transcript.notice(f"Allowed {self.asking_tool} for this session: it runs without asking until the "
                                   f"session ends.{network} /allowances lists and revokes what is allowed.", "warning")

    # -- subagents: a row each on the timeline; a child's approval is asked like the parent's --
    def on_subagent_started(self, event: ev.SubagentStarted) -> None:
        self.timeline.child_started(event.child_id, event.agent, event.task)

    def on_subagent_update(self, event: ev.SubagentUpdate) -> None:
        self.timeline.child_update(event)

    def on_subagent_finished(self, event: ev.SubagentFinished) -> None:
        self.timeline.child_finished(event)

    def on_goal_round(self, event: ev.GoalRound) -> None:
        self.status.set_goal(event.round, event.max_rounds, event.passed)
        verdict = "passed" if event.passed else f"failed (exit {event.exit_code})"
        self.transcript.notice(f"Goal round {event.round}/{event.max_rounds}: `{event.check}` {verdict}",
                               "info" if event.passed else "warning")

    def on_file_changed(self, event: ev.FileChanged) -> None:
        call_id = next((c for c in reversed(self.running_tool)), "")
        self.transcript.diff(event.path, event.diff, "\n".join(shown_lines(event.diagnostics)))
        self.on_files_changed(event, call_id in self.approved)

    def on_plan_updated(self, event: ev.PlanUpdated) -> None:
        self.timeline.set_plan(list(event.todos))

    # -- the structured workflow (agent/planning) --------------------------------------------
    def on_plan_created(self, event: ev.PlanCreated) -> None:
        self.timeline.show_steps(event.plan)

    def on_step_start(self, event: ev.StepStart) -> None:
        self.timeline.step_start(event.step_id)
        self.status.set_state("thinking", f"step {event.step_id}: {event.title}"[:60])

    def on_step_complete(self, event: ev.StepComplete) -> None:
        self.timeline.step_complete(event.step_id, event.status, event.summary)
        if event.status == "failed":
            self.transcript.notice(f"Step {event.step_id} failed: {event.summary.strip().splitlines()[-1][:300]}"
                                   if event.summary.strip() else f"Step {event.step_id} failed.", "warning")

    def on_plan_decision_required(self, event: ev.PlanDecisionRequired) -> None:
        self.status.set_state("waiting for you", "plan review" if event.kind == "review" else "failed step")

    def on_checkpoint(self, event: ev.CheckpointEvent) -> None:
        self.timeline.checkpoint(event.id, event.label, time.time())
        if event.restored:
            self.on_restored(event)

    def on_usage(self, event: ev.Usage) -> None:
        self.status.set_usage(event.total_prompt_tokens, event.total_completion_tokens, event.total_cost,
                              event.total_cached_tokens, event.total_reasoning_tokens)

    def on_retrying(self, event: ev.Retrying) -> None:
        self.transcript.notice(f"{event.why}: retrying in {event.delay:.0f}s (attempt {event.attempt})", "warning")
        until = time.time() + event.delay
        if event.reset_at:
            from datetime import datetime

            until = datetime.fromisoformat(event.reset_at).timestamp()
        what = "rate limit" if event.reset_at else "retry"
        self.status.set_state("waiting", f"{what} until {time.strftime('%H:%M:%S', time.localtime(until))}")

    def on_published(self, event: ev.Published) -> None:
        self.transcript.notice(f"Published {len(event.files)} file(s) to {event.branch} (commit {event.commit[:7]}): "
                               f"{event.compare_url}", "success")

    def on_scratchpad(self, event: ev.ScratchpadUpdated) -> None:
        show_scratchpad(self.timeline, event)

    def on_file_ready(self, event: ev.FileReady) -> None:
        self.transcript.notice(f"Saved {event.path} ({line_count(event.lines)}) from a code block of the answer", "success")

    def on_error(self, event: ev.ErrorEvent) -> None:
        self.transcript.notice(event.message, "error")

    def on_warning(self, event: ev.WarningEvent) -> None:
        self.transcript.notice(event.message, "warning")

    def on_compacted(self, event: ev.Compacted) -> None:
        if event.manual:  # /compact says what it did itself: one notice, not two
            return
        from agent.compaction import describe

        self.transcript.notice(f"To fit the context window: {describe(event)}", "dim")

    def on_model_fallback(self, event: ev.ModelFallback) -> None:
        self.transcript.notice(f"{event.from_model} failed ({event.reason}); using {event.to_model}.", "warning")
        self.status.set_model(event.to_model)

    def on_mcp_server(self, event: ev.McpServerState) -> None:
        if event.state == "running":
            self.transcript.notice(f"MCP server {event.server}: {len(event.tools)} tools.", "dim")

    def on_complete(self, event: ev.Complete) -> None:
        self.transcript.end_answer()
        if event.completion_reason in ("max_steps", "budget"):
            self.transcript.notice(event.final_response.rsplit("\n\n", 1)[-1], "warning")
        elif event.completion_reason == "stopped":
            self.transcript.notice("Stopped.", "warning")
        outcome = OUTCOMES[event.completion_reason]
        steps = f" · {event.iterations} step{'s' if event.iterations != 1 else ''}" if event.iterations else ""
        self.timeline.end_run(outcome + steps)
        self.running_tool.clear()
        self.approved.clear()
        self.decided.clear()
        self.status.set_state("idle")
        self.on_run_end(event)

    # -- a room ---------------------------------------------------------------------------
    def on_trigger(self, event: ev.TriggerEvent) -> None:
        where = f"{event.path}:{event.line}" if event.path else "chat"
        self.transcript.user(event.prompt, who=f"{event.by or 'someone'} · {where}")
        self.title = f"{event.by or 'someone'}: {event.prompt}"

    def on_room_state(self, event: ev.RoomState) -> None:
        if event.login_url and event.phase == "logging_in" and event.login_url != self.login_url:
            self.login_url = event.login_url  # shown once, as selectable text (a browser was asked to open it)
            self.transcript.notice(f"Log in to the room's server at {event.login_url}", "warning")
        self.on_room(event)

    def on_peer_joined(self, event: ev.PeerJoined) -> None:
        self.transcript.notice(f"{event.name} joined the room", "room")
        self.on_room(event)

    def on_peer_left(self, event: ev.PeerLeft) -> None:
        self.transcript.notice(f"{event.name} left the room", "room")
        self.on_room(event)

    def on_room_closed(self, event: ev.RoomClosed) -> None:
        self.transcript.notice(f"The room closed: {event.reason}", "warning")
        self.on_room(event)

    def tick(self) -> None:
        self.transcript.tick()
        self.timeline.tick()
        self.status.tick()
