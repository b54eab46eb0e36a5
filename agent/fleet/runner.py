"""One fleet job on a worker: claim it, open its target, run its session, then park, publish or fail.

A job runs as any recorded session does (`open_target`, `open_session`), with the worker's own
config (its model endpoint, keys and sandbox; the folder's trust as the worker's user gave it)
and the batch's choices (mode, model, profile, limits). While it runs, its lease in Redis is
renewed; a worker that dies stops renewing it, and the broker hands the unacknowledged message to
another worker after the visibility timeout, which takes the job over (a new attempt). A lease
lost while running (another worker took over) stops this attempt without publishing anything.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.events import Complete, ErrorEvent, FileChanged, Usage, WarningEvent
from agent.fleet.approver import FleetApprover, JobRef, resume_prompt
from agent.fleet.model import BatchSpec, Job, State
from agent.fleet.publish import Outcome, adopt, earlier, publish_once
from agent.fleet.settings import LEASE, FleetConfig
from agent.fleet.store import DIFF_LIMIT, FleetStore
from agent.secrets import redact

if TYPE_CHECKING:
    from agent.config import Config
    from agent.session.core import AgentSession
    from agent.session.target import Target


@dataclass
class Worker:
    """What a worker process runs jobs with."""

    store: FleetStore
    settings: FleetConfig
    name: str
    sandbox: str | None = None
    say: Callable[[str], None] = print


async def run_job(worker: Worker, batch: str, number: int) -> str:
    """Run job `number` of `batch` if it is this worker's to run; returns what happened: a job
    state (done, failed, parked), or why it did not run (skip, busy, full, budget, gone, lost)."""
    store = worker.store
    spec = store.batch(batch)
    if spec is None:
        return "gone"
    attempt = uuid.uuid4().hex[:12]
    claimed = store.claim(spec, number, attempt, worker.name)
    if claimed != "run":
        return claimed
    job = store.job(batch, number)
    assert job is not None
    where = f"attempt {job.attempts} on {worker.name}" if job.attempts > 1 else f"on {worker.name}"
    store.event(batch, number, "running", where)
    worker.say(f"job {batch}/{number} {job.target}: running")
    run = JobRun(worker, spec, job, JobRef(store, batch, number, attempt))
    renewing = asyncio.create_task(run.renew_lease())
    try:
        state = await run.execute()
    except Exception as exc:  # noqa: BLE001 - whatever broke, the job ends failed (its message is acknowledged)
        state = run.fail(exc)
    finally:
        renewing.cancel()
    worker.say(f"job {batch}/{number} {job.target}: {state}")
    return state


def warm() -> None:
    """Load what every job uses before the first one comes: the session's modules, and litellm
    when the worker's own model goes through it (seconds to import; a batch naming another such
    model loads it with its first job)."""
    import agent.session.open  # noqa: F401
    import agent.session.target  # noqa: F401
    from agent.config import ConfigError, load_config
    from agent.llm.preload import start_loading, warm_for

    try:
        config = load_config()
    except ConfigError:
        return  # said again, with its reason, by the first job that needs the configuration
    if warm_for(config.model, config.api_base, config.model_path):
        start_loading().result()


@dataclass
class JobRun:
    worker: Worker
    spec: BatchSpec
    job: Job
    ref: JobRef
    session: AgentSession | None = None
    diffs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stopped_for: str = ""  # budget, timeout or lost: why this attempt stopped its own run

    # -- the attempt ----------------------------------------------------------------------------
    async def execute(self) -> str:
        from agent.config import ConfigError
        from agent.session.target import TargetError

        resuming = self._restore_record()
        try:
            config = self._config()
            target = await self._open(config, resuming)
        except (ConfigError, TargetError) as exc:
            return self._end("failed", reason="error", note=str(exc))
        try:
            return await self._on(target, config, resuming)
        except Exception as exc:  # noqa: BLE001 - any failure is this job's outcome, said in its note
            return self.fail(exc)
        finally:
            await target.close()

    def fail(self, exc: Exception) -> str:
        return self._end("failed", reason="error", note=f"{type(exc).__name__}: {exc}")

    async def _on(self, target: Target, config: Config, resuming: bool) -> str:
        from agent.session.open import open_session
        from agent.session.ports import SessionPorts

        if self.spec.action != "prompt":
            return await self._action(target, config)
        github = target.github.workspace if target.github is not None else None
        if github is not None and self.spec.publish != "none":
            done = await earlier(self.ref, self.spec, github)  # (a redelivered job: published already?)
            if done is not None:
                return self._published(await adopt(done, self.spec, github, self._title(), self._body("")))
            if not resuming:
                github.remote.work_branch = self.spec.branch  # every attempt: the batch's branch
        approver = FleetApprover(self.ref, self.worker.settings.approval_wait, self.job.answer if resuming else None)
        session = open_session(target, config, SessionPorts(approver, self._sink), meta=self._meta(),
                               resume=self.job.session if resuming else None)
        self.session = session
        self.ref.store.update(self.ref.batch, self.ref.number, session=session.session_id)
        try:
            complete = await self._run(session, resume_prompt(self.job.answer) if resuming and self.job.answer
                                       else self.spec.prompt)
        finally:
            await session.close(keep_workspace=True)
            self._save_record(session)
        if approver.parked is not None:
            return "parked"
        return await self._outcome(complete, github)

    async def _action(self, target: Target, config: Config) -> str:
        """A scheduled task's named action (exploration, the map): the map's own work, no session."""
        from agent.session.tasks import ACTIONS

        note = await ACTIONS[self.spec.action](target.workspace, config, dict(self.spec.payload))
        return self._end("done", note=str(note))

    async def _run(self, session: AgentSession, prompt: str) -> Complete:
        session.route_intents = False  # a batch's prompt is its task, never a schedule
        timer = asyncio.get_running_loop().call_later(self.worker.settings.job_timeout, self._stop, "timeout")
        try:
            return await session.run(prompt)
        finally:
            timer.cancel()

    async def _outcome(self, complete: Complete, github: Any) -> str:
        answer = complete.final_response.strip()[:4000]
        if self.stopped_for == "lost":
            return "lost"
        if self.stopped_for:
            return self._end("failed", reason=self.stopped_for, note=_STOPPED[self.stopped_for], answer_text=answer)
        if not complete.success:
            note = "; ".join(self.errors[-1:]) or answer.replace("\n", " ")[:300]
            return self._end("failed", reason=complete.completion_reason, note=note, answer_text=answer)
        if github is None or self.spec.publish == "none":
            files = len(self.diffs)
            return self._end("done", note=f"changed {files} file(s)" if files else "no changes", answer_text=answer)
        outcome = await publish_once(self.ref, self.spec, github, self._title(), self._body(answer))
        if outcome is None:
            return self._end("done", note="no changes", answer_text=answer)
        return self._published(outcome, answer)

    def _published(self, outcome: Outcome, answer: str = "") -> str:
        return self._end("done", note=outcome.note(), branch=outcome.branch, commit=outcome.commit,
                         compare_url=outcome.compare_url, pr_url=outcome.pr_url, files=outcome.files,
                         answer_text=answer)

    def _end(self, state: State, **fields: Any) -> str:
        fields["note"] = redact(str(fields.get("note", "")))
        if self.diffs:
            fields["diff"] = "".join(self.diffs)[:DIFF_LIMIT]
        ref = self.ref
        if not ref.store.finish(ref.batch, ref.number, ref.attempt, state, **fields):
            return "lost"
        return state

    # -- what the session reports ---------------------------------------------------------------
    def _sink(self, event: Any) -> None:
        if isinstance(event, Usage):
            self._spend(event)
        elif isinstance(event, FileChanged):
            self.diffs.append(event.diff if event.diff.endswith("\n") else event.diff + "\n")
        elif isinstance(event, ErrorEvent):
            self.errors.append(event.message)
        elif isinstance(event, WarningEvent) and event.message.startswith("--max-cost"):
            self.ref.store.event(self.ref.batch, self.ref.number, "warning", event.message)  # (the batch's budget)

    def _spend(self, usage: Usage) -> None:
        spec, ref = self.spec, self.ref
        cost, tokens = ref.store.spend(ref.batch, ref.number, usage.cost or 0.0,
                                       usage.prompt_tokens + usage.completion_tokens)
        if (spec.max_cost is not None and cost >= spec.max_cost) or \
                (spec.max_tokens is not None and tokens >= spec.max_tokens):
            self._stop("budget")

    def _stop(self, why: str) -> None:
        if not self.stopped_for:
            self.stopped_for = why
        if self.session is not None:
            self.session.stop()

    async def renew_lease(self) -> None:
        ref = self.ref
        while True:
            await asyncio.sleep(LEASE / 3)
            try:
                ours = await asyncio.to_thread(ref.store.renew, ref.batch, ref.number, ref.attempt)
            except Exception as exc:  # noqa: BLE001 - Redis away for a moment: the next renewal may reach it
                self.worker.say(f"job {ref.batch}/{ref.number}: could not renew its lease ({exc})")
                continue
            if not ours:
                self._stop("lost")
                return

    # -- opening --------------------------------------------------------------------------------
    def _config(self) -> Config:
        from agent.config import load_config

        spec = self.spec
        spent_cost, spent_tokens = self.ref.store.spent(spec.id)
        flags = {"model": spec.model, "mode": spec.mode, "max_steps": spec.max_steps, "profile": spec.profile,
                 "workflow": spec.workflow, "sandbox": self.worker.sandbox,
                 # one job never spends more than the batch has left
                 "max_cost": None if spec.max_cost is None else max(spec.max_cost - spent_cost, 1e-9),
                 "max_tokens": None if spec.max_tokens is None else max(spec.max_tokens - spent_tokens, 1)}
        root = Path(self.job.target) if self.job.kind == "local" else None
        config = load_config(root if root is not None and root.is_dir() else None, flags)
        config.require_model()
        return config

    async def _open(self, config: Config, resuming: bool) -> Target:
        from agent.session.target import TargetSpec, open_target

        resume = self.job.session if resuming else None
        if self.job.kind == "github":
            spec = TargetSpec(github=self.job.target, prompt=self.spec.prompt, resume=resume)
        else:
            spec = TargetSpec(workspace=self.job.target, prompt=self.spec.prompt, resume=resume)
        return await open_target(spec, config, on_login=None)

    def _meta(self) -> dict[str, Any]:
        return {"fleet_batch": self.spec.id, "fleet_job": self.job.number, "fleet_worker": self.worker.name}

    def _title(self) -> str:
        first = (self.spec.prompt.strip().splitlines() or ["coder-tui fleet"])[0]
        return first if len(first) <= 72 else first[:71] + "…"

    def _body(self, answer: str) -> str:
        return f"{answer}\n\n---\nMade by coder-tui fleet, batch {self.spec.id}.".strip()

    # -- the session record, shared through Redis -----------------------------------------------
    def _restore_record(self) -> bool:
        """Whether this attempt resumes a parked session (its record written here from Redis first)."""
        from agent import paths

        job = self.job
        if job.answer is None or not job.session:
            return False
        text = self.ref.store.record(self.ref.batch, job.number)
        if text is None:
            return False
        folder = paths.private_dir(paths.sessions_dir())
        path = folder / f"{job.session}.jsonl"
        if not path.exists() or path.read_text(encoding="utf-8", errors="replace") != text:
            fd = paths.open_private(path, flags=_WRITE)
            with open(fd, "w", encoding="utf-8") as file:
                file.write(text)
        return True

    def _save_record(self, session: AgentSession) -> None:
        path = session.writer.path
        if path.exists() and self.stopped_for != "lost":  # (a lost attempt's record is not the job's)
            self.ref.store.save_record(self.ref.batch, self.ref.number, path.read_text(encoding="utf-8",
                                                                                         errors="replace"))


_STOPPED = {"budget": "stopped: the batch budget is spent", "timeout": "stopped: the job took longer than "
            "[fleet] job_timeout"}
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
