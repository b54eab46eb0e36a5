"""The fleet's part of "which session needs you" (`coder-tui sessions --live`, the app's `/live`):
the batches on this user's broker that still have work, and those whose jobs wait for an approval.
Nothing is asked of Redis when no broker is configured."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.fleet.store import FleetStore

RECENT = 20  # the newest batches looked at


def fleet_live_lines() -> list[str]:
    """A heading and a line per unfinished batch ([] when no broker is configured or none is at work)."""
    from agent.fleet.settings import FleetError, broker_configured

    if not broker_configured():
        return []
    from redis.exceptions import RedisError

    from agent.fleet.batches import connect

    try:
        _, store = connect()
        lines = _batch_lines(store)
    except FleetError as exc:
        return [f"fleet: {exc}"]
    except RedisError as exc:
        return [f"fleet: the broker stopped answering: {exc}"]
    return ["Fleet batches:", *lines] if lines else []


def _batch_lines(store: FleetStore) -> list[str]:
    from agent.frontends.fleetview import batch_row
    from agent.textsafe import visible

    lines = []
    for batch in store.batches(RECENT):
        spec = store.batch(batch)
        if spec is None:
            continue
        jobs = store.jobs(spec.id, spec.jobs)
        if all(job.state in ("done", "failed") for job in jobs):
            continue
        asking = sum(job.state in ("waiting", "parked") for job in jobs)
        lines.append(f"{'⏸' if asking else '◐'} {batch_row(spec, jobs)}")
        if asking:
            lines.append(visible(f"    waiting for you: {asking} approval(s) (`coder-tui fleet approve {spec.id}`)"))
    return lines

