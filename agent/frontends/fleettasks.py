"""`coder-tui tasks run-due --fleet` and `tasks worker --fleet`: the workspace's due scheduled
tasks run on the fleet's workers instead of here (agent/fleet/scheduled.py); the schedule and the
outcomes stay in this workspace's task store."""

from __future__ import annotations

from typing import Any

from agent.frontends.common import UsageError


async def run_due(options: Any) -> int:
    from agent.fleet.scheduled import run_due_on_fleet
    from agent.fleet.settings import FleetError
    from agent.frontends.knowledge import Reporter, open_workspace

    reporter = Reporter(options.json)
    workspace, config = await open_workspace(options, reporter)
    try:
        finished = await run_due_on_fleet(workspace, config, reporter.notice, github=getattr(workspace, "launch", None))
    except FleetError as exc:
        raise UsageError(str(exc)) from None
    finally:
        await workspace.close()
    if options.json:
        for task in finished:
            reporter.event({"type": "task_finished", **task.to_json()})
    reporter.result(f"{len(finished)} task(s) run on the fleet." if finished else "No task is due.")
    return 0 if all(t.status != "failed" for t in finished) else 1


async def worker(options: Any) -> int:
    from agent.fleet.scheduled import run_due_on_fleet
    from agent.fleet.settings import FleetError
    from agent.frontends.taskworker import run_worker

    try:
        return await run_worker(options, due=run_due_on_fleet)
    except FleetError as exc:
        raise UsageError(str(exc)) from None
