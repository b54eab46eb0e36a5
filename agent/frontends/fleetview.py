"""How a batch is shown: live progress (a bar per state on a terminal, a line per event
otherwise, JSON lines with --json) and the tables of `fleet status`.

What workers write (repository names, notes, approval summaries, diffs, the model's answers)
comes from outside this process: it is shown with control and bidi characters made visible.
"""

from __future__ import annotations

import json
import os
import time
from typing import TextIO

from agent.fleet.model import SHOWN, BatchSpec, Job
from agent.textsafe import json_line, visible

BAR = 24


def money(cost: float) -> str:
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


def counts(jobs: list[Job]) -> dict[str, int]:
    return {shown: sum(j.state in states for j in jobs) for shown, states in SHOWN.items()}


def spend_line(spec: BatchSpec, cost: float, tokens: int) -> str:
    limits = []
    if spec.max_cost is not None:
        limits.append(f"{money(cost)} of {money(spec.max_cost)}")
    else:
        limits.append(money(cost))
    limits.append(f"{tokens:,} tokens" + (f" of {spec.max_tokens:,}" if spec.max_tokens is not None else ""))
    return "spent " + " · ".join(limits)


def job_line(job: Job) -> str:
    """One job as a line: number, repository, state, outcome, spend."""
    outcome = job.note
    if job.state in ("waiting", "parked") and job.approval is not None:
        outcome = f"asks to run {job.approval.what}"
    parts = [f"{job.number:>3} {job.target}", job.shown_state]
    if outcome:
        parts.append(outcome)
    if job.cost or job.tokens:
        parts.append(f"{money(job.cost)}, {job.tokens:,} tokens")
    if job.session:
        parts.append(f"session {job.session} on {job.worker}")
    return visible(" · ".join(parts))


class Progress:
    """Live progress of one batch: `event` for each thing that happened, `update` with the jobs."""

    def __init__(self, spec: BatchSpec, out: TextIO, as_json: bool = False) -> None:
        self.spec, self.out, self.json = spec, out, as_json
        self.tty = out.isatty() and not as_json and os.environ.get("TERM") != "dumb"
        self._drawn = 0  # lines of the bars on the screen now
        self._names: dict[int, str] = {}

    def names(self, jobs: list[Job]) -> None:
        self._names = {j.number: j.target for j in jobs}

    def event(self, number: int, kind: str, text: str) -> None:
        if self.json:
            self._write(json_line(json.dumps({"type": "fleet_event", "batch": self.spec.id, "job": number,
                                              "repository": self._names.get(number, ""), "kind": kind,
                                              "text": text})) + "\n")
            return
        name = self._names.get(number, "batch") if number else f"batch {self.spec.id}"
        self._above(visible(f"{name}: {kind}" + ("" if not text else f" {text}" if kind == "running" else f": {text}")))

    def update(self, jobs: list[Job], cost: float, tokens: int) -> None:
        if not self.tty:
            return
        self._clear()
        lines = [f"batch {self.spec.id} · {len(jobs)} job(s) · {visible(_short(self.spec.prompt))}"]
        total = max(1, len(jobs))
        for shown, count in counts(jobs).items():
            filled = round(BAR * count / total)
            lines.append(f"  {shown:<21}{'█' * filled}{'░' * (BAR - filled)} {count:>4}")
        lines.append("  " + spend_line(self.spec, cost, tokens))
        self._write("\n".join(lines) + "\n")
        self._drawn = len(lines)

    def finish(self, jobs: list[Job], cost: float, tokens: int) -> None:
        """The outcome of every job, and what to do about jobs that wait."""
        self._clear()
        if self.json:
            self._write(json_line(json.dumps({"type": "fleet_batch", **batch_json(self.spec, jobs, cost, tokens)}))
                        + "\n")
            return
        tally = ", ".join(f"{n} {state}" for state, n in counts(jobs).items() if n)
        self._write(f"batch {self.spec.id}: {tally}; {spend_line(self.spec, cost, tokens)}\n")
        for job in jobs:
            self._write(job_line(job) + "\n")
        if any(j.state in ("waiting", "parked") for j in jobs):
            self._write(f"answer them with `coder-tui fleet approve {self.spec.id} JOB` (or --all; --deny to "
                        "refuse); `coder-tui fleet approve " + self.spec.id + "` shows what they ask\n")

    def _above(self, line: str) -> None:
        """A line of the log, above the bars (which are drawn again by the next update)."""
        self._clear()
        self._write(line + "\n")

    def _clear(self) -> None:
        if self.tty and self._drawn:
            self._write(f"\x1b[{self._drawn}F\x1b[J")
            self._drawn = 0

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def batch_json(spec: BatchSpec, jobs: list[Job], cost: float, tokens: int) -> dict[str, object]:
    return {"batch": spec.model_dump(), "spent": {"cost": cost, "tokens": tokens}, "counts": counts(jobs),
            "jobs": [j.model_dump(exclude={"diff"}) for j in jobs]}


def batch_header(spec: BatchSpec, jobs: list[Job], cost: float, tokens: int) -> list[str]:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(spec.created))
    settings = [f"mode {spec.mode or '(the workers’ config)'}", f"model {spec.model or '(the workers’ config)'}"]
    if spec.profile:
        settings.append(f"profile {spec.profile}")
    if spec.concurrency:
        settings.append(f"at most {spec.concurrency} at once")
    settings.append({"branch": "publishes a branch", "pr": "opens pull requests", "none": "publishes nothing"}
                    [spec.publish])
    tally = ", ".join(f"{n} {state}" for state, n in counts(jobs).items() if n)
    return [visible(f"batch {spec.id} by {spec.by}, {when}: {_short(spec.prompt or spec.action, 100)}"),
            "  " + " · ".join(settings), f"  {tally}; {spend_line(spec, cost, tokens)}"]


def batch_row(spec: BatchSpec, jobs: list[Job]) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(spec.created))
    tally = ", ".join(f"{n} {state}" for state, n in counts(jobs).items() if n)
    return visible(f"{spec.id}  {when}  {spec.jobs:>4} job(s)  {tally:<40}  {_short(spec.prompt or spec.action, 50)}")
