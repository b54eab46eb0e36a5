"""What Redis holds about a batch: its spec (what every job runs) and each job's view.

A job's state is one of queued, running, waiting (an approval waits on its worker), parked (an
approval waits with no worker: `fleet approve` resumes it), done and failed. Users see waiting
and parked together as "waiting for approval".
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

State = Literal["queued", "running", "waiting", "parked", "done", "failed"]
STATES: tuple[State, ...] = ("queued", "running", "waiting", "parked", "done", "failed")
FINAL: tuple[State, ...] = ("done", "failed")
Publish = Literal["branch", "pr", "none"]
# prompt: the batch's PROMPT as a session; the others are the named actions of scheduled tasks
# (agent/session/tasks.py ACTIONS): the codebase map's own work, no session
Action = Literal["prompt", "explore", "refresh_map", "summarize"]
# the states as the progress view groups them
SHOWN: dict[str, tuple[State, ...]] = {
    "queued": ("queued",), "running": ("running",), "waiting for approval": ("waiting", "parked"),
    "done": ("done",), "failed": ("failed",)}


class BatchSpec(BaseModel):
    """What `fleet run` asked: the same for every job of the batch. No key, token or endpoint:
    those come from each worker's own environment and config."""

    model_config = ConfigDict(extra="ignore")

    id: str
    prompt: str = ""
    action: Action = "prompt"
    payload: dict[str, Any] = Field(default_factory=dict)  # a named action's (summarize: its path)
    mode: Literal["ask", "allow", "plan"] | None = None
    model: str | None = None
    profile: str | None = None
    workflow: Literal["auto", "direct", "structured"] | None = None
    max_steps: int | None = None
    max_cost: float | None = None  # USD for the whole batch
    max_tokens: int | None = None  # tokens for the whole batch
    concurrency: int | None = None  # jobs of this batch running at once, fleet-wide
    publish: Publish = "branch"
    created: float = 0.0
    by: str = ""  # user@host that submitted it
    jobs: int = 0

    @property
    def branch(self) -> str:
        """The work branch of every GitHub job of the batch: the same on every attempt."""
        return f"coder-tui/fleet-{self.id}"


class Approval(BaseModel):
    """An approval a job waits for, as `fleet status` and `fleet approve` show it."""

    tool: str
    summary: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    command: str | None = None
    url: str | None = None
    diff: str = ""

    @property
    def what(self) -> str:
        """The call as a line: its summary (which names the tool), else the tool."""
        return self.summary or self.tool


Decided = Literal["allow_once", "allow_all", "deny"]


class Answer(BaseModel):
    """`fleet approve`'s answer: for the approval it saw (tool and arguments), when resuming."""

    decision: Decided
    feedback: str | None = None
    tool: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    summary: str = ""
    by: str = ""


class Job(BaseModel):
    """One repository of a batch, as its hash in Redis says."""

    model_config = ConfigDict(extra="ignore")

    number: int
    target: str  # OWNER/REPO[@REF] or an absolute folder path
    kind: Literal["github", "local"]
    state: State = "queued"
    worker: str = ""
    attempts: int = 0
    attempt_id: str = ""
    session: str = ""
    cost: float = 0.0
    tokens: int = 0
    note: str = ""  # the outcome or the reason, in a line
    answer_text: str = ""  # the model's last answer (a summary a batch asked for)
    reason: str = ""  # why it failed: error, budget, timeout, stopped
    branch: str = ""
    commit: str = ""
    compare_url: str = ""
    pr_url: str = ""
    files: list[str] = Field(default_factory=list)
    diff: str = ""
    approval: Approval | None = None
    answer: Answer | None = None
    started: float = 0.0
    finished: float = 0.0

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> Job:
        values: dict[str, Any] = dict(data)
        for key in ("files", "approval", "answer"):
            if values.get(key):
                values[key] = json.loads(values[key])
            else:
                values.pop(key, None)
        return cls.model_validate(values)

    @property
    def shown_state(self) -> str:
        return "waiting for approval" if self.state in ("waiting", "parked") else self.state

    @property
    def name(self) -> str:
        """The repository as the user named it (a folder: its path)."""
        return self.target
