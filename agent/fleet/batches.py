"""Starting a batch, answering its approvals, and finding a batch by its id or a prefix of it."""

from __future__ import annotations

import getpass
import socket
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.fleet.model import Answer, BatchSpec, Decided, Job
from agent.fleet.settings import FleetConfig, FleetError
from agent.fleet.store import FleetStore

if TYPE_CHECKING:
    from celery import Celery


def connect() -> tuple[FleetConfig, FleetStore]:
    """This user's fleet settings and the batches' store, with the broker reached (FleetError when
    there is none or it cannot be reached)."""
    from redis.exceptions import RedisError

    from agent.fleet.settings import HINT, fleet_config, redis_client

    settings = fleet_config()
    client = redis_client(settings)
    try:
        client.ping()
    except RedisError as exc:
        raise FleetError(f"cannot reach the fleet broker at {settings.shown}: {exc}; {HINT}") from None
    return settings, FleetStore(client)


def who() -> str:
    try:
        return f"{getpass.getuser()}@{socket.gethostname()}"
    except (KeyError, OSError):  # no user name for this uid (a container)
        return socket.gethostname()


def new_batch(fields: dict[str, Any], jobs: int) -> BatchSpec:
    return BatchSpec(id=uuid.uuid4().hex[:8], created=time.time(), by=who(), jobs=jobs, **fields)


def submit(store: FleetStore, app: Celery, spec: BatchSpec, targets: list[tuple[str, str]]) -> None:
    """Record the batch and its jobs, then send one message per job."""
    from agent.fleet.queue import send

    store.create(spec, targets)
    for number in range(1, len(targets) + 1):
        send(app, spec.id, number)


def find_batch(store: FleetStore, ref: str | None) -> BatchSpec:
    """The batch `ref` names (an id or a unique prefix; None: the newest)."""
    ids = store.batches(1) if ref is None else store.find(ref)
    if not ids:
        raise FleetError("no batch yet: start one with `coder-tui fleet run`" if ref is None else
                         f"no batch {ref!r} (`coder-tui fleet status` lists them)")
    if len(ids) > 1:
        raise FleetError(f"batch id {ref!r} is ambiguous: give more characters ({', '.join(ids[:5])})")
    spec = store.batch(ids[0])
    if spec is None:
        raise FleetError(f"batch {ids[0]} has expired")
    return spec


def pick_jobs(jobs: list[Job], ref: str) -> list[Job]:
    """The job `ref` names: its number, or its repository or folder (a unique part of it)."""
    if ref.isdigit():
        found = [j for j in jobs if j.number == int(ref)]
    else:
        found = [j for j in jobs if j.target.lower() == ref.lower()] or \
                [j for j in jobs if ref.lower() in j.target.lower()]
    if not found:
        raise FleetError(f"no job {ref!r} in this batch (`coder-tui fleet status BATCH` lists its jobs)")
    if len(found) > 1:
        raise FleetError(f"{ref!r} names {len(found)} jobs: give its number ({', '.join(str(j.number) for j in found)})")
    return found


@dataclass
class Answered:
    job: Job
    before: str  # the job's state before the answer


def answer_jobs(store: FleetStore, app: Celery, spec: BatchSpec, jobs: list[Job], decision: Decided,
                feedback: str | None) -> list[Answered]:
    """Answer the approval each job waits for; a parked job is queued again to resume with it."""
    from agent.fleet.queue import send

    done = []
    for job in jobs:
        approval = job.approval
        if job.state not in ("waiting", "parked") or approval is None:
            done.append(Answered(job, job.state))
            continue
        answer = Answer(decision=decision, feedback=feedback, tool=approval.tool,
                        args=approval.args, summary=approval.summary, by=who())
        before = store.answer(spec.id, job.number, answer)
        if before == "parked":  # (a waiting job's worker says it took the answer)
            send(app, spec.id, job.number)
            store.event(spec.id, job.number, "answered", f"{decision} {approval.tool} by {answer.by}: queued again")
        done.append(Answered(job, before))
    return done
