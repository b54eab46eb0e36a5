"""The map and scheduled-task tools: get_codebase_map, schedule_task, list_tasks, cancel_task.

Scheduling and cancelling change what the agent will do later without anyone watching, so they
are gated like edits: blocked in plan mode, asked in ask mode (the approval shows the prompt
and when it runs), run in allow mode. Reading the map and listing tasks always run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from agent.knowledge.cron import CronError
from agent.knowledge.taskstates import STATUSES
from agent.tools.base import Proposal, Tool, ToolArgs, ToolContext, ToolError, ToolKind

if TYPE_CHECKING:
    from agent.knowledge.tasks import TaskStore

# The map builder and the task store (sqlite3, tree-sitter's parsers) are imported when one of
# these tools runs, not with the tools: every start lists the tools, few runs use these.


@contextmanager
def _task_store(ctx: ToolContext) -> Iterator[TaskStore]:
    """The workspace's task store, closed after use; its errors become the tool's error message."""
    from agent.knowledge.tasks import TaskError, task_store

    store = task_store(ctx.workspace)
    try:
        yield store
    except (TaskError, CronError) as exc:
        raise ToolError(str(exc)) from None
    finally:
        store.close()


class MapArgs(ToolArgs):
    path: str = Field(default="", description="Folder or file to show ('' for the whole workspace).")
    query: str | None = Field(default=None, description="Words to find in paths, summaries, tags and symbol "
                                                         "names (ranked matches instead of the outline).")


class GetCodebaseMap(Tool):
    name = "get_codebase_map"
    description = (
        "The codebase map: files with AI summaries, tags and their definitions (functions, classes), "
        "ranked by how much the code refers to them. Give a path for a folder's outline or a file's "
        "details, or a query to find the files about something. Cheaper than reading files to orient."
    )
    Args = MapArgs

    async def run(self, args: MapArgs, ctx: ToolContext) -> str:
        from agent.knowledge.builder import current_view

        view = await current_view(ctx.workspace)
        if view is None or not view.records:
            raise ToolError("the workspace has no files to map")
        path = ctx.workspace.normalize(args.path) if args.path else ""
        files, summarised = view.counts()
        head = f"Map: {files} file(s), {summarised} with an AI summary"
        head += ".\n" if summarised else " (the user can add summaries with `coder-tui map`).\n"
        if args.query:
            return head + view.search(args.query)
        return head + view.outline(path)


class ScheduleArgs(ToolArgs):
    description: str = Field(default="", description="What to do: the prompt the agent runs when the task is due "
                                                     "(for another action, a label).")
    action: Literal["prompt", "explore", "summarize", "refresh_map"] = Field(
        default="prompt", description="prompt (run the description as an agent session), explore (one exploration "
                                      "step), summarize (one file's map summary: payload {\"path\": ...}) or "
                                      "refresh_map (the map's structure).")
    payload: dict[str, str] = Field(default_factory=dict, description="The action's data, e.g. {\"path\": \"src/app.py\"}.")
    at: str | None = Field(default=None, description="When, as an ISO 8601 time (local time unless it has a zone).")
    delay_seconds: int | None = Field(default=None, ge=0, description="Or: run this many seconds from now.")
    cron: str | None = Field(default=None, description="Or: a repeating five-field cron schedule, e.g. '0 9 * * 1-5'.")


class ScheduleTask(Tool):
    name = "schedule_task"
    description = (
        "Schedule a task: a prompt that runs later as its own recorded agent session in this workspace "
        "(give exactly one of at, delay_seconds or cron). It runs when due in a running coder-tui, "
        "or through `coder-tui tasks run-due` from cron or a systemd timer."
    )
    Args = ScheduleArgs
    kind: ClassVar[ToolKind] = "exec"

    def key_argument(self, args: dict[str, object]) -> str:
        return str(args.get("description", ""))

    async def prepare(self, args: ScheduleArgs, ctx: ToolContext) -> Proposal:
        given = [n for n in ("at", "delay_seconds", "cron") if getattr(args, n) is not None]
        if len(given) != 1:
            raise ToolError("give exactly one of `at`, `delay_seconds` or `cron`")
        if args.action == "prompt" and not args.description.strip():
            raise ToolError("a prompt task needs a description: the prompt the agent will run")
        from agent.knowledge.tasks import TaskError, check_action, parse_at

        try:
            check_action(args.action, args.payload)
            if args.at is not None:
                parse_at(args.at)
            if args.cron is not None:
                from agent.knowledge.cron import parse_cron

                parse_cron(args.cron)
        except (TaskError, CronError) as exc:
            raise ToolError(str(exc)) from None
        when = {"at": f"at {args.at}", "delay_seconds": f"in {args.delay_seconds} s",
                "cron": f"on cron {args.cron!r}"}[given[0]]
        return Proposal(summary=f"Schedule a task {when} in {ctx.workspace.label}",
                        command=(f"coder-tui run {args.description!r}" if args.action == "prompt" else
                                 f"{args.action} {args.payload.get('path', '')}".strip()) + f"  ({when})",
                        cwd=ctx.workspace.label)

    async def run(self, args: ScheduleArgs, ctx: ToolContext) -> str:
        with _task_store(ctx) as store:
            task = store.schedule(args.description, args.at, args.delay_seconds, args.cron, action=args.action,
                                  payload=args.payload)
        return f"Scheduled task {task.id}: {task.line()}"


class ListTasksArgs(ToolArgs):
    status: str | None = Field(default=None, description=f"Only tasks with this status: {', '.join(STATUSES)}.")


class ListTasks(Tool):
    name = "list_tasks"
    description = "List this workspace's scheduled tasks with status, next time, runs, sessions and notes."
    Args = ListTasksArgs

    async def run(self, args: ListTasksArgs, ctx: ToolContext) -> str:
        with _task_store(ctx) as store:
            tasks = store.list(args.status)
        if not tasks:
            return "No tasks" + (f" with status {args.status}." if args.status else " are scheduled.")
        return "\n".join(task.line() for task in tasks)


class CancelArgs(ToolArgs):
    id: str = Field(description="The task id (or a unique prefix) from list_tasks.")


class CancelTask(Tool):
    name = "cancel_task"
    description = "Cancel a pending scheduled task (it stays listed as cancelled)."
    Args = CancelArgs
    kind: ClassVar[ToolKind] = "exec"

    def key_argument(self, args: dict[str, object]) -> str:
        return str(args.get("id", ""))

    async def prepare(self, args: CancelArgs, ctx: ToolContext) -> Proposal:
        with _task_store(ctx) as store:
            task = store.get(args.id)
        return Proposal(summary=f"Cancel task {task.id}: {task.description}",
                        command=f"cancel task {task.id}", cwd=ctx.workspace.label)

    async def run(self, args: CancelArgs, ctx: ToolContext) -> str:
        with _task_store(ctx) as store:
            task = store.cancel(args.id)
        return f"Cancelled task {task.id}: {task.description}"


KNOWLEDGE_TOOLS: list[type[Tool]] = [GetCodebaseMap, ScheduleTask, ListTasks, CancelTask]
