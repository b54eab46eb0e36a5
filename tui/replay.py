"""Showing a resumed session: the conversation from its messages, the timeline from its events."""

from __future__ import annotations

import json
from typing import Any

from tui.mentions import typed_part
from tui.presenter import QUIET_TOOLS
from tui.widgets.history import Block
from tui.widgets.transcript import Transcript

TIMELINE_EVENTS = {"run_started", "plan_updated", "checkpoint", "tool_call", "tool_result", "complete", "usage",
                   "plan_created", "step_start", "step_complete"}


def replay(data: Any, presenter: Any, transcript: Transcript) -> None:
    _conversation(data.messages, transcript, presenter.key_argument)
    _timeline(data.events, presenter)
    count = sum(1 for m in data.messages if m.get("role") == "user")
    note = f"Resumed session {data.meta.get('session_id', '')}: {count} earlier request{'s' if count != 1 else ''}."
    if data.damaged_lines:
        note += f" {data.damaged_lines} damaged line(s) of its file were skipped."
    transcript.notice(note, "dim")
    if (offer := unfinished_plan_note(data.state)) is not None:
        transcript.notice(offer, "warning")


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


def _conversation(messages: list[dict[str, Any]], transcript: Transcript, key_argument: Any) -> None:
    """The earlier conversation as history blocks (one widget, however long it was)."""
    blocks: list[Block] = []
    calls: dict[str, Block] = {}
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        text = content if isinstance(content, str) else json.dumps(content)
        if role == "user":
            typed, attached = typed_part(text)
            blocks.append(Block("user", typed, "you"))
            if attached:
                blocks.append(Block("notice", "attached: " + ", ".join(attached), "dim"))
        elif role == "assistant":
            if text:
                blocks.append(Block("answer", text))
            blocks.extend(_calls(message, calls, key_argument))
        elif role == "tool" and (call := calls.get(message.get("tool_call_id", ""))) is not None:
            call.text, call.ok = text, not text.startswith("Error:")
    transcript.history.extend(blocks)


def _calls(message: dict[str, Any], calls: dict[str, Block], key_argument: Any) -> list[Block]:
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


def _timeline(events: list[dict[str, Any]], presenter: Any) -> None:
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
            timeline.trace_done(event.call_id, event.ok)
        elif kind == "complete":
            timeline.end_run("done" if event.success else event.completion_reason.replace("_", " "))
        elif kind == "plan_created":
            timeline.show_steps(event.plan)
        elif kind == "step_start":
            timeline.step_start(event.step_id)
        elif kind == "step_complete":
            timeline.step_complete(event.step_id, event.status, event.summary)
        elif kind == "usage":
            presenter.status.set_usage(event.total_prompt_tokens, event.total_completion_tokens, event.total_cost)
