"""Showing a resumed session: the conversation from its messages, the timeline from its events.

The messages say what the model read; the events say what happened: whether a call failed, was
denied or stopped by the user, how long it ran, which checkpoints were taken and restored, and
the mode the session was in. Calls are shown from their events, as they were shown live, and
only a call without any (an older file, a call the run never reached) from its message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent import events as ev
from agent.images import count as image_count, text_of
from agent.session.notes import is_note
from agent.session.shapes import recorded_events, skipped_note
from agent.consumer import EventHandler
from agent.textsafe import shown_copy
from agent.attachments import typed_part
from agent.llm.reasoning import shown_text
from agent.lsp.report import shown_lines
from tui.presenter import QUIET_TOOLS, Presenter
from tui.toolresult import decision_notes, shorten, shown_result
from tui.widgets.history import Block
from tui.widgets.transcript import Transcript

MODES = ("plan", "ask", "allow")


@dataclass
class Recorded:
    """What the events of a session file say, beside its messages."""

    calls: dict[str, Block] = field(default_factory=dict)  # call id -> its row as shown live
    diffs: dict[str, list[Block]] = field(default_factory=dict)  # call id -> the diffs of what it changed
    restores: dict[int, list[str]] = field(default_factory=dict)  # runs before it -> notices
    mode: str | None = None  # the mode of the last run (or the session's first)


def replay(data: Any, presenter: Any, transcript: Transcript, mode_flag: str | None = None) -> str | None:
    """Show `data`; returns the mode to switch to (the session's, unless --mode asked for one)."""
    events, skipped = recorded_events(data.events)
    recorder = _Recorder(data.meta.get("mode"))
    for event in events:
        recorder.handle(event)
    recorded = recorder.recorded
    shown = data.history or data.messages  # the whole conversation, also what a compaction replaced
    _conversation(shown, transcript, presenter.key_argument, recorded)
    timeline = _TimelineReplay(presenter, recorded)
    for event in events:
        timeline.handle(event)
    if presenter.timeline.run is not None:  # the process ended mid-run (killed): nothing runs now
        presenter.timeline.end_run("interrupted: the session ended before the run finished")
    count = sum(1 for m in shown if m.get("role") == "user" and not is_note(m))
    note = f"Resumed session {data.meta.get('session_id', '')}: {count} earlier request{'s' if count != 1 else ''}."
    mode = recorded.mode if recorded.mode in MODES else None
    if mode and mode_flag and mode_flag != mode:
        note += f" It was in {mode.upper()} mode; --mode keeps {mode_flag.upper()}."
        mode = None
    elif mode:
        note += f" {mode.upper()} mode, as the session left it."
    if data.damaged_lines:
        note += f" {data.damaged_lines} damaged line(s) of its file were skipped."
    if skipped:
        note += " " + skipped_note(skipped)
    transcript.notice(note, "dim")
    if (offer := unfinished_plan_note(data.state)) is not None:
        transcript.notice(offer, "warning")
    return mode


def unfinished_plan_note(state: dict[str, Any]) -> str | None:
    """The offer to continue the session's unfinished plan, if it has one."""
    from agent.planning.models import Plan

    try:
        plan = Plan.model_validate(state["plan"]) if state.get("plan") else None
    except ValueError:
        return None
    step = plan.current() if plan is not None else None
    if plan is None or step is None:
        return None
    number = plan.steps.index(step) + 1
    return (f"This session has an unfinished plan: step {number} of {len(plan.steps)} ({step.title}) is next. "
            "/plan continue runs it from there.")


class _Recorder(EventHandler):
    """What the events say about each call's row, the restores between runs and the last mode."""

    def __init__(self, first_mode: str | None) -> None:
        self.recorded = Recorded(mode=first_mode)
        self.asked: dict[str, str] = {}  # approval id -> call id
        self.decided: dict[str, str] = {}  # call id -> the user's answer, as its row shows it
        self.labels: dict[str, str] = {}  # checkpoint id -> label
        self.runs = 0
        self.call = ""  # the call whose changes the next file_changed events are

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        self.call = event.call_id

    def on_file_changed(self, event: ev.FileChanged) -> None:
        note = "\n".join(shown_lines(event.diagnostics))
        self.recorded.diffs.setdefault(self.call, []).append(Block("diff", event.diff, event.path, note=note))

    def on_run_started(self, event: ev.RunStarted) -> None:
        self.runs += 1
        self.recorded.mode = event.mode

    def on_approval_required(self, event: ev.ApprovalRequired) -> None:
        self.asked[event.approval_id] = event.call_id

    def on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        call = self.asked.get(event.approval_id, "")
        self.decided[call] = decision_notes(event.decision, event.feedback, event.rejected_hunks,
                                            event.edited_files)[1]

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        self.recorded.calls[event.call_id] = _row(event, self.decided.pop(event.call_id, ""))

    def on_checkpoint(self, event: ev.CheckpointEvent) -> None:
        self.labels[event.id] = event.label
        if restored := event.restored:
            label = self.labels.get(restored)
            self.recorded.restores.setdefault(self.runs, []).append(
                f"Restored checkpoint {restored[:7]}{f' ({label})' if label else ''}: the files went back "
                f"to it (the state before is checkpoint {event.id[:7]}).")


def _row(event: ev.ToolResultEvent, decision: str) -> Block:
    body = (event.output if event.ok else event.error or "failed") or ""
    shown = shown_result(event.tool, event.ok, body, decision)
    return Block("tool", body, event.tool, ok=shown.ok, note=shown.note, preview=shown.preview,
                 duration=event.duration)


def _conversation(messages: list[dict[str, Any]], transcript: Transcript, key_argument: Any,
                  recorded: Recorded) -> None:
    """The earlier conversation as history blocks (one widget, however long it was)."""
    blocks: list[Block] = []
    calls: dict[str, Block] = {}
    runs = 0
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        text = content if isinstance(content, str) else text_of(content) if role == "user" else json.dumps(content)
        if is_note(message):  # coder-tui's note for the model (a restore): the restore's notice says it
            continue
        if role == "user":
            blocks.extend(Block("notice", notice, "warning") for notice in recorded.restores.get(runs, []))
            runs += 1
            typed, attached = typed_part(text)
            blocks.append(Block("user", typed, "you"))
            if attached:
                blocks.append(Block("notice", "attached: " + ", ".join(attached), "dim"))
            if image_count(content):
                blocks.append(Block("notice", f"{image_count(content)} image(s) sent with this prompt", "dim"))
        elif role == "assistant":
            if thought := shown_text(message):
                blocks.append(Block("reasoning", thought))
            if text:
                blocks.append(Block("answer", text))
            blocks.extend(_calls(message, calls, key_argument))
        elif role == "tool" and (call := calls.get(message.get("tool_call_id", ""))) is not None:
            _result(call, message.get("tool_call_id", ""), text, recorded)
            at = next(i for i in range(len(blocks) - 1, -1, -1) if blocks[i] is call) + 1
            blocks[at:at] = recorded.diffs.pop(message.get("tool_call_id", ""), [])  # as live: under the call
    blocks.extend(Block("notice", notice, "warning") for notice in recorded.restores.get(runs, []))
    transcript.history.extend(blocks)


def _result(call: Block, call_id: str, text: str, recorded: Recorded) -> None:
    """A call's row: from its events when it has them, else from what the model was told."""
    shown = recorded.calls.get(call_id)
    if shown is not None:
        call.text, call.ok, call.note, call.preview, call.duration = (
            shown.text, shown.ok, shown.note, shown.preview, shown.duration)
        return
    call.text, call.ok = text, not text.startswith(("Error:", "Not completed:"))
    if not call.ok:
        call.note = shorten(text.removeprefix("Error:").removeprefix("Not completed:"))


def _calls(message: dict[str, Any], calls: dict[str, Block], key_argument: Callable[[str, dict[str, Any]], str]
           ) -> list[Block]:
    blocks = []
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        name = function.get("name", "?")
        if name in QUIET_TOOLS:
            continue
        block = Block("tool", "", name, key=key_argument(name, _args(function.get("arguments"))))
        calls[call.get("id", "")] = block
        blocks.append(block)
    return blocks


def _args(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class _TimelineReplay(EventHandler):
    """The timeline as the runs left it: runs, plans, checkpoints, traces and the usage so far."""

    def __init__(self, presenter: Presenter, recorded: Recorded) -> None:
        self.presenter, self.timeline, self.recorded = presenter, presenter.timeline, recorded

    def handle(self, event: ev.Event) -> None:
        """A recorded event is as untrusted as a live one: shown with its control characters visible."""
        super().handle(shown_copy(event))

    def on_run_started(self, event: ev.RunStarted) -> None:
        self.timeline.start_run(event.prompt)

    def on_plan_updated(self, event: ev.PlanUpdated) -> None:
        self.timeline.set_plan(list(event.todos))

    def on_scratchpad(self, event: ev.ScratchpadUpdated) -> None:
        from tui.widgets.scratchpad import show_scratchpad

        show_scratchpad(self.timeline, event)

    def on_checkpoint(self, event: ev.CheckpointEvent) -> None:
        self.timeline.checkpoint(event.id, event.label)

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        if event.tool not in QUIET_TOOLS:
            self.timeline.trace(event.call_id, event.tool, self.presenter.key_argument(event.tool, event.args))

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        shown = self.recorded.calls.get(event.call_id)
        self.timeline.trace_done(event.call_id, bool(shown.ok) if shown is not None else event.ok)

    def on_complete(self, event: ev.Complete) -> None:
        self.timeline.end_run("done" if event.success else event.completion_reason.replace("_", " "))

    def on_plan_created(self, event: ev.PlanCreated) -> None:
        self.timeline.show_steps(event.plan)

    def on_step_start(self, event: ev.StepStart) -> None:
        self.timeline.step_start(event.step_id)

    def on_step_complete(self, event: ev.StepComplete) -> None:
        self.timeline.step_complete(event.step_id, event.status, event.summary)

    def on_usage(self, event: ev.Usage) -> None:
        self.presenter.status.set_usage(event.total_prompt_tokens, event.total_completion_tokens, event.total_cost,
                                        event.total_cached_tokens, event.total_reasoning_tokens)
