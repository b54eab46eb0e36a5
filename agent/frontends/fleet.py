"""`coder-tui fleet worker | run | status | approve`: the agent over many repositories on Celery
workers (agent/fleet). Exit codes of `run` and `status --follow`: 0 every job done, 1 a job failed,
2 usage or broker errors, 3 jobs wait for approval (and none failed), 130 Ctrl+C (the batch goes on).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from typing import TYPE_CHECKING, Any

from agent.frontends.common import UsageError
from agent.frontends.fleetview import Progress, batch_header, batch_json, batch_row, job_line
from agent.textsafe import json_line, visible

if TYPE_CHECKING:
    from agent.fleet.model import BatchSpec, Decided, Job
    from agent.fleet.settings import FleetConfig
    from agent.fleet.store import FleetStore


def main(command: str, options: Any) -> int:
    """Run a fleet command; a usage or broker problem is one line and exit 2."""
    from agent.fleet.settings import FleetError

    commands = {"worker": worker, "run": run, "status": status, "approve": approve}
    try:
        return commands[command](options)
    except (UsageError, FleetError) as exc:
        print(f"coder-tui: error: {visible(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _connect() -> tuple[FleetConfig, FleetStore]:
    from agent.fleet.batches import connect

    return connect()


# -- worker -------------------------------------------------------------------------------------
def worker(options: Any) -> int:
    from celery.signals import worker_ready

    from agent.fleet.queue import make_app, register
    from agent.fleet.runner import Worker, warm

    settings, store = _connect()
    name = options.name or f"coder-tui-{socket.gethostname()}-{os.getpid()}"
    app = make_app(settings)
    register(app, Worker(store, settings, name, options.sandbox, say=_say))
    _say(f"fleet worker {name} takes jobs from {settings.shown}, one at a time (Ctrl+C stops after the "
         "current job)")
    warm()  # (before "ready": the first job does not wait for the imports)
    worker_ready.connect(lambda **_: _say(f"fleet worker {name} ready"), weak=False)
    celery = app.Worker(hostname=name, pool="solo", concurrency=1, loglevel=options.log_level.upper(),
                        without_gossip=True, without_mingle=True, without_heartbeat=True, quiet=True,
                        optimization="fair")
    celery.start()
    return int(celery.exitcode or 0)


def _say(text: str) -> None:
    print(visible(text), flush=True)


# -- run ----------------------------------------------------------------------------------------
def run(options: Any) -> int:
    from agent.fleet.batches import new_batch, submit
    from agent.fleet.queue import make_app

    fields = _batch_fields(options)
    targets = asyncio.run(_targets(options.repos))
    settings, store = _connect()
    spec = new_batch(fields, len(targets))
    submit(store, make_app(settings), spec, targets)
    if options.detach:
        print(spec.id if options.json else f"batch {spec.id}: {len(targets)} job(s) queued; follow it with "
              f"`coder-tui fleet status {spec.id} --follow`")
        return 0
    return follow(store, spec, options.json)


def _batch_fields(options: Any) -> dict[str, Any]:
    prompt = (options.prompt or "").strip()
    if options.action == "prompt" and not prompt:
        raise UsageError("PROMPT is required (or --action explore or map)")
    if options.action != "prompt" and prompt:
        raise UsageError(f"--action {options.action} takes no PROMPT")
    action = {"map": "refresh_map"}.get(options.action, options.action)
    return {"prompt": prompt, "action": action, "mode": options.mode, "model": options.model,
            "profile": options.profile, "workflow": options.workflow, "max_steps": options.max_steps,
            "max_cost": options.max_cost, "max_tokens": options.max_tokens, "concurrency": options.concurrency,
            "publish": "pr" if options.pr else "none" if options.no_publish else "branch"}


async def _targets(value: str) -> list[tuple[str, str]]:
    from agent.config import ConfigError, load_config
    from agent.fleet.repos import read_repos

    try:
        config = load_config(None) if not os.path.isfile(value) else None
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return list(await read_repos(value, config))


def follow(store: FleetStore, spec: BatchSpec, as_json: bool, out: Any = None) -> int:
    """Show the batch's progress until every job is done, failed or parked; the exit code."""
    view = Progress(spec, out or sys.stdout, as_json)
    after = "0"
    try:
        while True:
            jobs = store.jobs(spec.id, spec.jobs)  # (read before the events: none is missed at the end)
            view.names(jobs)
            for entry, fields in store.events(spec.id, after):
                after = entry
                view.event(int(fields.get("job") or 0), fields.get("kind", ""), fields.get("text", ""))
            view.update(jobs, *store.spent(spec.id))
            if all(j.state in ("done", "failed", "parked") for j in jobs):
                break
            store.events(spec.id, after, block=1.0)  # wake at the next event (or in a second)
    except KeyboardInterrupt:
        print(f"\nbatch {spec.id} goes on; follow it with `coder-tui fleet status {spec.id} --follow`",
              file=sys.stderr)
        return 130
    view.finish(jobs, *store.spent(spec.id))
    return exit_code(jobs)


def exit_code(jobs: list[Job]) -> int:
    if any(j.state == "failed" for j in jobs):
        return 1
    return 3 if any(j.state in ("waiting", "parked") for j in jobs) else 0


# -- status -------------------------------------------------------------------------------------
def status(options: Any) -> int:
    from agent.fleet.batches import find_batch, pick_jobs

    _, store = _connect()
    if options.batch is None and not (options.follow or options.diff or options.record):
        return _list(store, options.json)
    spec = find_batch(store, options.batch)
    if options.follow:
        return follow(store, spec, options.json)
    jobs = store.jobs(spec.id, spec.jobs)
    if options.diff or options.record:
        job = pick_jobs(jobs, options.diff or options.record)[0]
        text = job.diff if options.diff else store.record(spec.id, job.number)
        if not text:
            raise UsageError(f"job {job.number} ({job.target}) has no {'diff' if options.diff else 'record here'}")
        sys.stdout.write(visible(text) if options.diff and sys.stdout.isatty() else text)
        return 0
    cost, tokens = store.spent(spec.id)
    if options.json:
        print(json_line(_dumps(batch_json(spec, jobs, cost, tokens))))
        return 0
    print("\n".join(batch_header(spec, jobs, cost, tokens)))
    for job in jobs:
        print(job_line(job))
    return 0


def _list(store: FleetStore, as_json: bool) -> int:
    specs = [s for s in (store.batch(b) for b in store.batches(50)) if s is not None]
    if as_json:
        print(json_line(_dumps([batch_json(s, store.jobs(s.id, s.jobs), *store.spent(s.id)) for s in specs])))
        return 0
    if not specs:
        print("no batch yet: start one with `coder-tui fleet run PROMPT --repos FILE`")
    for spec in specs:
        print(batch_row(spec, store.jobs(spec.id, spec.jobs)))
    return 0


def _dumps(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


# -- approve ------------------------------------------------------------------------------------
def approve(options: Any) -> int:
    from agent.fleet.batches import answer_jobs, find_batch, pick_jobs
    from agent.fleet.queue import make_app

    if options.job and options.all:
        raise UsageError("give JOB or --all, not both")
    if options.feedback and not options.deny:
        raise UsageError("--feedback goes with --deny (it tells the model why)")
    settings, store = _connect()
    spec = find_batch(store, options.batch)
    jobs = store.jobs(spec.id, spec.jobs)
    asking = [j for j in jobs if j.state in ("waiting", "parked") and j.approval is not None]
    if not options.job and not options.all:
        return _show_approvals(spec, asking)
    chosen = asking if options.all else pick_jobs(jobs, options.job)
    if not chosen:
        print(f"no job of batch {spec.id} waits for approval")
        return 0
    decision: Decided = "deny" if options.deny else "allow_all" if options.always else "allow_once"
    for done in answer_jobs(store, make_app(settings), spec, chosen, decision, options.feedback):
        what = {"waiting": "answered; its worker goes on", "parked": "answered; queued to resume"}
        print(visible(f"{done.job.number:>3} {done.job.target}: " +
                      what.get(done.before, f"nothing to answer (it is {done.before})")))
    return 0


def _show_approvals(spec: BatchSpec, asking: list[Job]) -> int:
    if not asking:
        print(f"no job of batch {spec.id} waits for approval")
        return 0
    for job in asking:
        approval = job.approval
        assert approval is not None
        print(visible(f"{job.number:>3} {job.target}: asks to run {approval.what}"))
        for line in (approval.command, approval.url):
            if line:
                print(visible(f"      {line}"))
        if approval.diff:
            print(visible(approval.diff.rstrip("\n")))
    print(f"answer with `coder-tui fleet approve {spec.id} JOB` or `--all` (`--deny --feedback TEXT` refuses)")
    return 0
