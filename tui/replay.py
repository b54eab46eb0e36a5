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

from tui.mentions import typed_part
from tui.presenter import QUIET_TOOLS
from tui.toolresult import decision_notes, shorten, shown_result
from tui.widgets.history import Block
from tui.widgets.transcript import Transcript

TIMELINE_EVENTS = {"run_started", "plan_updated", "checkpoint", "tool_call", "tool_result", "complete", "usage",
                   "plan_created", "step_start", "step_complete"}
MODES = ("plan", "ask", "allow")


@dataclass
class Recorded:
    """What the events of a session file say, beside its messages."""

    calls: dict[str, Block] = field(default_factory=dict)  # call id -> its row as shown live
    restores: dict[int, list[str]] = field(default_factory=dict)  # runs before it -> notices
    mode: str | None = None  # the mode of the last run (or the session's first)


def replay(data: Any, presenter: Any, transcript: Transcript, mode_flag: str | None = None) -> str | None:
    """Show `data`; returns the mode to switch to (the session's, unless --mode asked for one)."""
    recorded = _recorded(data.events, data.meta.get("mode"))
    shown = data.history or data.messages  # the whole conversation, also what a compaction replaced
    _conversation(shown, transcript, presenter.key_argument, recorded)
    _timeline(data.events, presenter, recorded)
    count = sum(1 for m in shown if m.get("role") == "user")
    note = f"Resumed session {data.meta.get('session_id', '')}: {count} earlier request{'s' if count != 1 else ''}."
    mode = recorded.mode if recorded.mode in MODES else None
    if mode and mode_flag and mode_flag != mode:
        note += f" It was in {mode.upper()} mode; --mode keeps {mode_flag.upper()}."
        mode = None
    elif mode:
        note += f" {mode.upper()} mode, as the session left it."
    if data.damaged_lines:
        note += f" {data.damaged_lines} damaged line(s) of its file were skipped."
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


def _recorded(events: list[dict[str, Any]], first_mode: str | None) -> Recorded:
    recorded = Recorded(mode=first_mode)
    asked: dict[str, str] = {}  # approval id -> call id
    decided: dict[str, str] = {}  # call id -> the user's answer, as its row shows it
    labels: dict[str, str] = {}  # checkpoint id -> label
    runs = 0
    for event in events:
        kind = event.get("type")
        if kind == "run_started":
            runs += 1
            recorded.mode = event.get("mode", recorded.mode)
        elif kind == "approval_required":
            asked[event.get("approval_id", "")] = event.get("call_id", "")
        elif kind == "approval_resolved" and event.get("decision") in ("allow_once", "allow_all", "deny", "stop"):
            call = asked.get(event.get("approval_id", ""), "")
            decided[call] = decision_notes(event["decision"], event.get("feedback"), event.get("rejected_hunks"),
                                           event.get("edited_files"))[1]
        elif kind == "tool_result":
            recorded.calls[event.get("call_id", "")] = _row(event, decided.pop(event.get("call_id", ""), ""))
        elif kind == "checkpoint":
            labels[event.get("id", "")] = event.get("label", "")
            if restored := event.get("restored"):
                label = labels.get(restored)
                recorded.restores.setdefault(runs, []).append(
                    f"Restored checkpoint {restored[:7]}{f' ({label})' if label else ''}: the files went back "
                    f"to it (the state before is checkpoint {event.get('id', '')[:7]}).")
    return recorded


def _row(event: dict[str, Any], decision: str) -> Block:
    ok = bool(event.get("ok"))
    body = (event.get("output") if ok else event.get("error") or "failed") or ""
    shown = shown_result(event.get("tool", ""), ok, body, decision)
    return Block("tool", body, event.get("tool", ""), ok=shown.ok, note=shown.note, preview=shown.preview,
                 duration=float(event.get("duration") or 0.0))


def _conversation(messages: list[dict[str, Any]], transcript: Transcript, key_argument: Any,
                  recorded: Recorded) -> None:
    """The earlier conversation as history blocks (one widget, however long it was)."""
    blocks: list[Block] = []
    calls: dict[str, Block] = {}
    runs = 0
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        text = content if isinstance(content, str) else json.dumps(content)
        if role == "user":
            blocks.extend(Block("notice", notice, "warning") for notice in recorded.restores.get(runs, []))
            runs += 1
            typed, attached = typed_part(text)
            blocks.append(Block("user", typed, "you"))
            if attached:
                blocks.append(Block("notice", "attached: " + ", ".join(attached), "dim"))
        elif role == "assistant":
            if text:
                blocks.append(Block("answer", text))
            blocks.extend(_calls(message, calls, key_argument))
        elif role == "tool" and (call := calls.get(message.get("tool_call_id", ""))) is not None:
            _result(call, message.get("tool_call_id", ""), text, recorded)
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


def _timeline(events: list[dict[str, Any]], presenter: Any, recorded: Recorded) -> None:
    from agent.events import parse_event

    timeline = presenter.timeline
    for raw in events:
        kind = raw.get("type")
        if kind not in TIMELINE_EVENTS:
            continue
        try:
            event = parse_event(raw)
        except ValueError:  # an event from another version: the timeline skips it
            continue
        if kind == "run_started":
            timeline.start_run(event.prompt)
        elif kind == "plan_updated":
            timeline.set_plan(list(event.todos))
        elif kind == "checkpoint":
            timeline.checkpoint(event.id, event.label, raw.get("created"))
        elif kind == "tool_call" and event.tool not in QUIET_TOOLS:
            timeline.trace(event.call_id, event.tool, presenter.key_argument(event.tool, event.args))
        elif kind == "tool_result":
            shown = recorded.calls.get(event.call_id)
            timeline.trace_done(event.call_id, shown.ok if shown is not None else event.ok)
        elif kind == "complete":
            timeline.end_run("done" if event.success else event.completion_reason.replace("_", " "))
        elif kind == "plan_created":
            timeline.show_steps(event.plan)
        elif kind == "step_start":
            timeline.step_start(event.step_id)
        elif kind == "step_complete":
            timeline.step_complete(event.step_id, event.status, event.summary)
        elif kind == "usage":
            presenter.status.set_usage(event.total_prompt_tokens, event.total_completion_tokens, event.total_cost,
                                       event.total_cached_tokens)
