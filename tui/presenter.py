"""Events in, widgets updated: the one place that knows how each agent event looks in the app.

The agent loop runs on the app's own event loop, so the session's sink calls `handle` directly;
text deltas only append to a buffer (the transcript flushes it at most 20 times a second).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tui.toolresult import decision_notes, shown_result
from tui.widgets.statusbar import StatusBar
from tui.widgets.timeline import Timeline
from tui.widgets.transcript import Transcript

OUTCOMES = {
    "answered": "✓ done", "max_steps": "■ stopped at the step limit", "stopped": "■ stopped",
    "error": "✗ failed", "budget": "■ stopped: budget spent",
}
QUIET_TOOLS = {"todo_write", "todo_read"}  # shown on the timeline, not as rows in the chat


class Presenter:
    def __init__(self, transcript: Transcript, timeline: Timeline, status: StatusBar,
                 key_argument: Callable[[str, dict[str, Any]], str]) -> None:
        self.transcript, self.timeline, self.status = transcript, timeline, status
        self.key_argument = key_argument
        self.on_files_changed: Callable[[Any, bool], None] = lambda event, approved: None
        self.on_run_start: Callable[[Any], None] = lambda event: None
        self.on_run_end: Callable[[Any], None] = lambda event: None
        self.on_room: Callable[[Any], None] = lambda event: None
        self.title: str | None = None  # what the next run_started shows on the timeline
        self.running_tool: dict[str, str] = {}  # call id -> tool name
        self.approved: set[str] = set()  # call ids whose change the user saw and approved
        self.asking = ""  # the call id of the approval on screen
        self.asking_tool = ""
        self.decided: dict[str, str] = {}  # call id -> how the user's answer reads on its finished row
        self.login_url = ""

    def handle(self, event: Any) -> None:
        method = getattr(self, f"_on_{event.type}", None)
        if method is not None:
            method(event)

    # -- a run ----------------------------------------------------------------------------
    def _on_run_started(self, e: Any) -> None:
        self.status.set_model(e.model)
        self.status.set_state("thinking")
        self.timeline.start_run(self.title or e.prompt)
        self.title = None
        self.on_run_start(e)

    def _on_step_started(self, e: Any) -> None:
        self.status.set_state("thinking", f"step {e.iteration}" if e.iteration > 1 else "")

    def _on_text_delta(self, e: Any) -> None:
        if self.status.state != "writing":
            self.status.set_state("writing")
        self.transcript.text(e.text)

    def _on_tool_call(self, e: Any) -> None:
        key = self.key_argument(e.tool, e.args)
        self.running_tool[e.call_id] = e.tool
        if e.tool not in QUIET_TOOLS:
            self.transcript.tool_call(e.call_id, e.tool, key)
            self.timeline.trace(e.call_id, e.tool, key)
        self.status.set_state("running", e.tool)

    def _on_tool_result(self, e: Any) -> None:
        self.running_tool.pop(e.call_id, None)
        self.status.set_state("thinking")
        if e.tool in QUIET_TOOLS:
            if e.ok:
                return
            self.transcript.tool_call(e.call_id, e.tool, "")  # a failed plan update is worth a line
        body = e.output if e.ok else (e.error or "failed")
        shown = shown_result(e.tool, e.ok, body or "", self.decided.pop(e.call_id, ""))
        self.transcript.tool_result(e.call_id, shown.ok, body or "", e.duration, shown.note, shown.preview)
        self.timeline.trace_done(e.call_id, shown.ok)

    def _on_approval_required(self, e: Any) -> None:
        self.asking, self.asking_tool = e.call_id, e.tool
        self.transcript.note_row(e.call_id, "waiting for approval")
        self.status.set_state("waiting for approval", e.tool)

    def _on_approval_resolved(self, e: Any) -> None:
        call_id = self.asking
        if e.decision in ("allow_once", "allow_all"):
            self.approved.add(call_id)
        note, self.decided[call_id] = decision_notes(e.decision, e.feedback, e.rejected_hunks, e.edited_files)
        self.transcript.note_row(call_id, note)
        self.status.set_state("running", self.running_tool.get(call_id, ""))
        if e.decision == "allow_all" and self.asking_tool not in self.status.allowances:
            self.status.set_allowances([*self.status.allowances, self.asking_tool])
            self.transcript.notice(f"Allowed {self.asking_tool} for this session: it runs without asking until the "
                                   "session ends. /allowances lists and revokes what is allowed.", "warning")

    def _on_file_changed(self, e: Any) -> None:
        call_id = next((c for c in reversed(self.running_tool)), "")
        self.transcript.diff(e.path, e.diff)
        self.on_files_changed(e, call_id in self.approved)

    def _on_plan_updated(self, e: Any) -> None:
        self.timeline.set_plan(list(e.todos))

    # -- the structured workflow (agent/planning) --------------------------------------------
    def _on_plan_created(self, e: Any) -> None:
        self.timeline.show_steps(e.plan)

    def _on_step_start(self, e: Any) -> None:
        self.timeline.step_start(e.step_id)
        self.status.set_state("thinking", f"step {e.step_id}: {e.title}"[:60])

    def _on_step_complete(self, e: Any) -> None:
        self.timeline.step_complete(e.step_id, e.status, e.summary)
        if e.status == "failed":
            self.transcript.notice(f"Step {e.step_id} failed: {e.summary.strip().splitlines()[-1][:300]}"
                                   if e.summary.strip() else f"Step {e.step_id} failed.", "warning")

    def _on_plan_decision_required(self, e: Any) -> None:
        self.status.set_state("waiting for you", "plan review" if e.kind == "review" else "failed step")

    def _on_checkpoint(self, e: Any) -> None:
        self.timeline.checkpoint(e.id, e.label, time.time())

    def _on_usage(self, e: Any) -> None:
        self.status.set_usage(e.total_prompt_tokens, e.total_completion_tokens, e.total_cost, e.total_cached_tokens)

    def _on_retrying(self, e: Any) -> None:
        self.transcript.notice(f"{e.why}: retrying in {e.delay:.0f}s (attempt {e.attempt})", "warning")
        until = time.time() + e.delay
        if e.reset_at:
            from datetime import datetime

            until = datetime.fromisoformat(e.reset_at).timestamp()
        what = "rate limit" if e.reset_at else "retry"
        self.status.set_state("waiting", f"{what} until {time.strftime('%H:%M:%S', time.localtime(until))}")

    def _on_published(self, e: Any) -> None:
        self.transcript.notice(f"Published {len(e.files)} file(s) to {e.branch} (commit {e.commit[:7]}): "
                               f"{e.compare_url}", "success")

    def _on_error(self, e: Any) -> None:
        self.transcript.notice(e.message, "error")

    def _on_warning(self, e: Any) -> None:
        self.transcript.notice(e.message, "warning")

    def _on_compacted(self, e: Any) -> None:
        self.transcript.notice(f"Compacted the conversation to fit the context window: about "
                               f"{e.tokens_before:,} → {e.tokens_after:,} tokens.", "dim")

    def _on_model_fallback(self, e: Any) -> None:
        self.transcript.notice(f"{e.from_model} failed ({e.reason}); using {e.to_model}.", "warning")
        self.status.set_model(e.to_model)

    def _on_mcp_server(self, e: Any) -> None:
        if e.state == "running":
            self.transcript.notice(f"MCP server {e.server}: {len(e.tools)} tools.", "dim")

    def _on_complete(self, e: Any) -> None:
        self.transcript.end_answer()
        if e.completion_reason in ("max_steps", "budget"):
            self.transcript.notice(e.final_response.rsplit("\n\n", 1)[-1], "warning")
        elif e.completion_reason == "stopped":
            self.transcript.notice("Stopped.", "warning")
        outcome = OUTCOMES[e.completion_reason]
        steps = f" · {e.iterations} step{'s' if e.iterations != 1 else ''}" if e.iterations else ""
        self.timeline.end_run(outcome + steps)
        self.running_tool.clear()
        self.approved.clear()
        self.decided.clear()
        self.status.set_state("idle")
        self.on_run_end(e)

    # -- a room ---------------------------------------------------------------------------
    def _on_trigger(self, e: Any) -> None:
        where = f"{e.path}:{e.line}" if e.path else "chat"
        self.transcript.user(e.prompt, who=f"{e.by or 'someone'} · {where}")
        self.title = f"{e.by or 'someone'}: {e.prompt}"

    def _on_room_state(self, e: Any) -> None:
        if e.login_url and e.phase == "logging_in" and e.login_url != self.login_url:
            self.login_url = e.login_url  # shown once, as selectable text (a browser was asked to open it)
            self.transcript.notice(f"Log in to the room's server at {e.login_url}", "warning")
        self.on_room(e)

    def _on_peer_joined(self, e: Any) -> None:
        self.transcript.notice(f"{e.name} joined the room", "room")
        self.on_room(e)

    def _on_peer_left(self, e: Any) -> None:
        self.transcript.notice(f"{e.name} left the room", "room")
        self.on_room(e)

    def _on_room_closed(self, e: Any) -> None:
        self.transcript.notice(f"The room closed: {e.reason}", "warning")
        self.on_room(e)

    def tick(self) -> None:
        self.transcript.tick()
        self.timeline.tick()
        self.status.tick()
