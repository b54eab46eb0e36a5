"""Scripted turns for structured-workflow tests: the planner's plan, step answers, the report."""

from __future__ import annotations

from typing import Any

from tests.fakellm import Reply, call


def plan_reply(*titles: str, goal: str = "Add the feature") -> Reply:
    steps = [{"title": t, "description": f"do {t.lower()}"} for t in titles]
    return Reply(tool_calls=[call("submit_plan", refined_goal=goal, steps=steps)])


def write(path: str, content: str) -> Reply:
    return Reply(tool_calls=[call("write_file", file_path=path, content=content)])


def plan_events(events: list[Any]) -> list[tuple[Any, ...]]:
    """The plan's story: (type, step id, status) for the structured events."""
    story: list[tuple[Any, ...]] = []
    for e in events:
        if e.type == "plan_created":
            story.append(("plan_created", tuple(s.title for s in e.plan.steps)))
        elif e.type == "step_start":
            story.append(("step_start", e.step_id))
        elif e.type == "step_complete":
            story.append(("step_complete", e.step_id, e.status))
        elif e.type in ("classification", "plan_decision_required"):
            story.append((e.type, getattr(e, "task_type", None) or e.kind))
    return story


def user_text(request: dict[str, Any]) -> str:
    """The (first) user message of a recorded request: each conversation starts with one."""
    return next(m["content"] for m in request["messages"] if m["role"] == "user")
