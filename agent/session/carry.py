"""What a compaction keeps of a session's task word for word (agent/compaction.py `Carried`).

`TaskLog` follows the session's events (live, and the recorded ones on resume): the user's
messages (each run's prompt, and messages sent while a plan runs) and the files changed. With
the plan and the todo list the session keeps and the scratchpad, `carried` makes the `Carried`
that the compactor puts before its summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.compaction import Carried
from agent.tools.planning import render_todos

if TYPE_CHECKING:
    from agent.session.core import AgentSession

STEP_ICONS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]", "failed": "[!]", "skipped": "[-]"}


@dataclass
class TaskLog:
    prompts: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    def note(self, kind: str, data: dict[str, Any]) -> None:
        """One event (its type and fields) of the session, live or recorded."""
        if kind == "run_started" and str(data.get("prompt") or "").strip():
            self.prompts.append(str(data["prompt"]))
        elif kind == "file_changed" and (path := data.get("path")) and path not in self.changed:
            self.changed.append(str(path))

    def sent(self, text: str) -> None:
        """A message the user sent while a plan ran."""
        self.prompts.append(text)


def carried(session: AgentSession) -> Carried:
    from agent.planning.models import Plan
    from agent.planning.orchestrator import PLAN_STATE

    data = session.state.get(PLAN_STATE)
    plan = Plan.model_validate(data) if data else None
    todos = session.todos
    result = Carried(prompts=list(session.task_log.prompts), changed=list(session.task_log.changed))
    if plan is not None:
        result.plan = _plan_text(plan)
        done = sum(step.finished for step in plan.steps)
        result.counts["plan"] = f"the plan ({len(plan.steps)} steps, {done} done)"
    if todos:
        result.todos = render_todos(todos)
        result.counts["todos"] = f"the todo list ({len(todos)} items)"
    pad = session.scratchpad.prompt_section().strip()
    if pad and pad not in str(session.messages[0].get("content") or ""):
        result.scratchpad = pad.split("\n", 1)[1] if "\n" in pad else pad
    result.next_step = _next_step(plan, todos)
    return result


def _plan_text(plan: Any) -> str:
    lines = [f"Goal: {plan.refined_goal}"]
    for number, step in enumerate(plan.steps, 1):
        lines.append(f"{STEP_ICONS.get(step.status, '[ ]')} {number}. {step.title} ({step.status})")
        if step.description and not step.finished:
            lines.append(f"    {step.description}")
        if step.summary and step.finished:
            lines.append(f"    done: {step.summary}")
    return "\n".join(lines)


def _next_step(plan: Any, todos: list[Any]) -> str:
    step = plan.current() if plan is not None else None
    if step is not None:
        number = plan.steps.index(step) + 1
        return f"Plan step {number}: {step.title}" + (f" ({step.description})" if step.description else "")
    for status in ("in_progress", "pending"):
        item = next((t for t in todos if t.status == status), None)
        if item is not None:
            return f"Todo {item.id}: {item.content} ({status.replace('_', ' ')})"
    return ""
