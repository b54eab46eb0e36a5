"""todo_read and todo_write: the plan the agent keeps and the timeline shows."""

from __future__ import annotations

from pydantic import Field, field_validator

from agent.events import PlanUpdated, TodoItem
from agent.tools.base import Tool, ToolArgs, ToolContext

ICONS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}


def render_todos(todos: list[TodoItem]) -> str:
    if not todos:
        return "The plan is empty."
    return "\n".join(f"{ICONS[t.status]} {t.id}. {t.content}" for t in todos)


class TodoReadArgs(ToolArgs):
    pass


class TodoRead(Tool):
    name = "todo_read"
    description = "Show the current plan (todo list) with each item's status."
    Args = TodoReadArgs

    async def run(self, args: TodoReadArgs, ctx: ToolContext) -> str:
        return render_todos(ctx.todos)


class TodoWriteArgs(ToolArgs):
    todos: list[TodoItem] = Field(
        description="The whole plan, replacing the previous one. Status: pending, in_progress, "
        "completed or cancelled; keep one item in_progress while working on it."
    )

    @field_validator("todos")
    @classmethod
    def _unique_ids(cls, todos: list[TodoItem]) -> list[TodoItem]:
        seen: set[str] = set()
        for item in todos:
            if item.id in seen:
                raise ValueError(f"todo id {item.id!r} is used twice; ids must be unique")
            seen.add(item.id)
        return todos


class TodoWrite(Tool):
    name = "todo_write"
    description = (
        "Replace the plan (todo list). Use it for tasks with several steps: write the steps first, "
        "then mark each in_progress and completed as you go. The user sees the plan live."
    )
    Args = TodoWriteArgs

    async def run(self, args: TodoWriteArgs, ctx: ToolContext) -> str:
        ctx.todos[:] = args.todos
        ctx.emit(PlanUpdated(todos=list(args.todos)))
        done = sum(t.status == "completed" for t in args.todos)
        return f"Plan updated ({done}/{len(args.todos)} done):\n{render_todos(ctx.todos)}"


PLANNING_TOOLS: list[type[Tool]] = [TodoRead, TodoWrite]
