"""What a restore means beyond the files: plan steps whose work it undid are open again.

A plan step's checkpoint is labelled `plan step N: …` (agent/planning/orchestrator.py). A restore
of checkpoint C undoes every checkpoint from C on, so the earliest plan step among them, and every
later step, go back to pending: `--resume` (or the app's offer) then continues the plan from there.
The app and `run` reopen the steps of their own session; `coder-tui undo` finds the sessions that
took the undone checkpoints (by their `checkpoint` events) and records the change in them.
"""

from __future__ import annotations

import re
from typing import Any

from agent.checkpoints import CheckpointInfo, Checkpoints

STEP_LABEL = re.compile(r"plan step (\d+):")


def undone_ids(checkpoints: Checkpoints, restored: CheckpointInfo) -> list[CheckpointInfo]:
    """The checkpoints a restore of `restored` undid: it and every newer one (newest first)."""
    undone = []
    for item in checkpoints.list():
        undone.append(item)
        if item.id == restored.id:
            return undone
    return undone


def reopen(plan_data: Any, undone: list[CheckpointInfo]) -> Any | None:
    """The plan with the undone steps pending again, or None when the restore touched no step."""
    from agent.planning.models import Plan

    numbers = [int(m.group(1)) for c in undone if (m := STEP_LABEL.match(c.label))]
    if not numbers or not plan_data:
        return None
    try:
        plan = Plan.model_validate(plan_data)
    except ValueError:
        return None
    changed = False
    for step in plan.steps[min(numbers) - 1:]:
        if step.status != "pending":
            step.status, step.summary, changed = "pending", "", True
    return plan if changed else None


async def reopen_in_session(session: Any, restored: CheckpointInfo) -> Any | None:
    """Reopen the live session's undone plan steps (saved and shown); the reopened plan, or None."""
    import asyncio

    from agent.planning.orchestrator import PLAN_STATE, publish

    if session.checkpoints is None or not session.state.get(PLAN_STATE):
        return None
    undone = await asyncio.to_thread(undone_ids, session.checkpoints, restored)
    plan = reopen(session.state.get(PLAN_STATE), undone)
    if plan is not None:
        publish(session, plan)
    return plan


def reopen_in_records(checkpoints: Checkpoints, restored: CheckpointInfo, saved: CheckpointInfo,
                      include_untouched: bool) -> list[str]:
    """For `coder-tui undo`: reopen the plan steps in the recorded sessions that took the undone
    checkpoints. Returns what to tell the user (one line per session changed or left alone)."""
    import os

    from agent.planning.orchestrator import PLAN_STATE
    from agent.session.notes import restore_note
    from agent.session.record import SessionError, SessionStore, load

    undone = undone_ids(checkpoints, restored)
    ids = {c.id for c in undone}
    said: list[str] = []
    store = SessionStore()
    for summary in store.list():
        if not summary.root or os.path.realpath(summary.root) != str(checkpoints.root):
            continue
        data = load(summary.path)
        if not any(e.get("type") == "checkpoint" and str(e.get("id", ""))[:10] in ids for e in data.events):
            continue
        try:
            writer, data = store.reopen(summary.path)
        except SessionError as exc:
            said.append(f"session {summary.id} was not told of the restore: {exc}")
            continue
        try:
            plan = reopen(data.state.get(PLAN_STATE), undone)
            if plan is not None:
                writer.state(PLAN_STATE, plan.model_dump())
                said.append(f"session {summary.id}: its plan continues from the first undone step "
                            f"(`coder-tui run --resume {summary.id}`)")
            writer.note(restore_note(restored, saved, include_untouched))
        finally:
            writer.close()
    return said

