"""The Celery app of the fleet and its one task. Importing this module imports Celery (about a
third of a second): only the fleet commands do, after their arguments are parsed.

Nothing is lost: a job's message is acknowledged only when the job has ended (`acks_late`), a job
whose worker process is lost is requeued (`reject_on_worker_lost`), and the Redis transport hands
a message nobody acknowledged to another worker after the visibility timeout, which is longer
than a job may run ([fleet] job_timeout), so only the job of a worker that died runs again. Each
worker reserves one message at a time (prefetch 1) and runs one job at a time (the solo pool:
its process is the job's, so killing it kills the job and nothing else goes on with it).
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from agent.fleet.settings import FleetConfig

if TYPE_CHECKING:
    from celery import Celery

    from agent.fleet.runner import Worker

TASK = "coder_tui.fleet.job"
QUEUE = "coder-tui-fleet"
RETRY = ("busy", "full")  # not this worker's turn: the message is sent again, a little later


def make_app(settings: FleetConfig) -> Celery:
    from celery import Celery

    app = Celery("coder_tui_fleet", broker=settings.broker, backend=settings.broker, set_as_current=False)
    transport = {"visibility_timeout": settings.visibility_timeout,
                 "unacked_restore_interval": settings.restore_interval, "unacked_restore_throttle": 1}
    app.conf.update(
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        task_default_queue=QUEUE, task_serializer="json", result_serializer="json", accept_content=["json"],
        broker_transport_options=transport, result_backend_transport_options=transport,
        broker_connection_retry_on_startup=True, result_expires=7 * 24 * 3600,
        worker_hijack_root_logger=False, worker_redirect_stdouts=False, task_track_started=False,
    )
    return app


def send(app: Celery, batch: str, number: int) -> None:
    """One message naming the job (the batch and its number: nothing else goes through the broker)."""
    app.send_task(TASK, args=[batch, number], queue=QUEUE)


class JobLoop:
    """One event loop, in a thread, that every job of the worker runs on (sessions keep
    loop-bound clients between jobs)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="fleet-jobs", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, str]) -> str:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


def register(app: Celery, worker: Worker) -> None:
    """The task the worker runs: a job of a batch, on `worker`."""
    from agent.fleet.runner import run_job

    jobs = JobLoop()

    @app.task(name=TASK, bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
    def job(self: Any, batch: str, number: int) -> str:
        result = jobs.run(run_job(worker, batch, number))
        if result in RETRY:
            raise self.retry(countdown=1 + random.random() * 2)
        return result
