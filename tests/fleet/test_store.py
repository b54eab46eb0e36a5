"""The batch store's atomic steps against a real redis-server: who may run a job, who may publish
it, and an approval answered while its worker waits or just as it parks."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.fleet.model import Answer, Approval, BatchSpec
from agent.fleet.store import FleetStore
from tests.fleet.conftest import NO_REDIS, RedisServer, wait_until


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FleetStore]:
    if shutil.which("redis-server") is None:
        pytest.skip(NO_REDIS)
    server = RedisServer(tmp_path).start()
    try:
        yield FleetStore(server.client())
    finally:
        server.stop()


def batch(store: FleetStore, jobs: int = 2, **fields: object) -> BatchSpec:
    spec = BatchSpec(id="b1", prompt="bump", jobs=jobs, **fields)  # type: ignore[arg-type]
    store.create(spec, [(f"octo/r{n}", "github") for n in range(1, jobs + 1)])
    return spec


def test_a_job_runs_once_at_a_time_and_a_dead_attempt_is_taken_over(store: FleetStore) -> None:
    spec = batch(store)
    assert store.claim(spec, 1, "a", "w1") == "run"
    assert store.claim(spec, 1, "b", "w2") == "busy"  # a's lease is alive: b's message comes back later
    store.r.delete(store.key("b1", "job", 1, "lease"))  # a's worker died: its lease ran out
    assert store.claim(spec, 1, "b", "w2") == "run"
    assert not store.renew("b1", 1, "a") and store.renew("b1", 1, "b")
    assert not store.finish("b1", 1, "a", "failed", note="late")  # a dead attempt never writes the outcome
    assert store.finish("b1", 1, "b", "done", note="published")
    job = store.job("b1", 1)
    assert job is not None and (job.state, job.note, job.worker, job.attempts) == ("done", "published", "w2", 2)
    assert store.claim(spec, 1, "c", "w3") == "skip"  # a redelivered message of a finished job


def test_concurrency_and_budget_are_checked_when_a_job_starts(store: FleetStore) -> None:
    spec = batch(store, jobs=3, concurrency=1, max_cost=1.0)
    assert store.claim(spec, 1, "a", "w1") == "run"
    assert store.claim(spec, 2, "b", "w2") == "full"
    store.spend("b1", 1, 1.25, 100)
    assert store.finish("b1", 1, "a", "done", note="ok")
    assert store.claim(spec, 2, "b", "w2") == "budget"
    job = store.job("b1", 2)
    assert job is not None and job.state == "failed" and job.note == "not started: the batch budget is spent"
    assert store.spent("b1") == (1.25, 100)


def test_an_answer_reaches_the_waiting_worker_or_queues_the_parked_job(store: FleetStore) -> None:
    batch(store)
    approval = Approval(tool="write_file", summary="write_file: README.md", args={"file_path": "README.md"})
    answer = Answer(decision="allow_once", tool="write_file", args={"file_path": "README.md"})
    store.claim(store.batch("b1"), 1, "a", "w1")  # type: ignore[arg-type]
    got: list[Answer | None] = []
    waiting = threading.Thread(target=lambda: got.append(store.wait_for_answer("b1", 1, approval, 30)))
    waiting.start()
    wait_until(lambda: store.r.hget(store.key("b1", "job", 1), "state") == "waiting", 30, "the job waiting")
    assert store.answer("b1", 1, answer) == "waiting"
    waiting.join(30)
    assert got == [answer]  # the worker goes on at once, well before its 30 s
    store.claim(store.batch("b1"), 2, "c", "w2")  # type: ignore[arg-type]
    assert store.wait_for_answer("b1", 2, approval, 0) is None
    store.r.rpush(store.key("b1", "job", 2, "answers"), answer.model_dump_json())  # answered as it parks
    assert store.park("b1", 2, "c", "parks") == answer
    assert store.park("b1", 2, "c", "parks") is None
    parked = store.job("b1", 2)
    assert parked is not None and parked.state == "parked" and parked.approval == approval
    assert store.answer("b1", 2, answer) == "parked"
    queued = store.job("b1", 2)
    assert queued is not None and queued.state == "queued" and queued.answer == answer and queued.approval is None


def test_one_attempt_holds_the_publish_marker(store: FleetStore) -> None:
    assert store.take_marker("b1", "Octo/R1", "a")
    assert not store.take_marker("b1", "octo/r1", "b")  # a is publishing
    assert store.take_marker("b1", "octo/r1", "b", dead="a")  # a died before it published
    store.mark_published("b1", "octo/r1", "abc123")
    assert store.marker("b1", "OCTO/r1") == "published:abc123"
    assert not store.take_marker("b1", "octo/r1", "c", dead="a")
