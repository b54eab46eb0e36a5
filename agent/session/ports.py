"""What a front end gives `open_session`: its ports (who answers, who listens) and its options.

`SessionPorts` are the session's connections to the person or program driving it: the approver
that answers approvals, the reviewer that answers plan reviews and failed steps, and the sink that
receives every event. `SessionOptions` are the command line's choices about a session, read once
from the parsed arguments into typed fields (front ends pass them on instead of argparse bags).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agent.approval import Approver
from agent.planning.review import PlanReviewer

Sink = Callable[[Any], None]
DEFAULT_SERVER = "https://api.open-collab.tools/"


@dataclass
class SessionPorts:
    """The approver, the event sink and the plan reviewer (None: a QueueReviewer answered through
    the session). An approver or reviewer with an `attach(session)` method is bound to the session
    it answers for (a stdin approver reads plan decisions and messages for it too; the app's
    reviewer shows that session's plan)."""

    approver: Approver
    sink: Sink
    reviewer: PlanReviewer | None = None


class SessionOptions(BaseModel):
    """The session flags of `coder-tui`, `run`, `room`, `serve` and `acp` (what a command lacks is
    its default). Built once from argparse's namespace with `from_args`."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    # what to open (agent.session.target.TargetSpec)
    workspace: str | None = None
    github: str | None = None
    clone: bool = False
    issue: int | None = None
    prompt: str = ""
    resume: str | None = None
    fork: str | None = None  # `run --fork ID`: resume a copy of this session
    images: list[str] = []  # `run --image PATH` (repeatable)
    room: str | None = None
    server: str = DEFAULT_SERVER
    name: str = "agent"
    email: str | None = None
    approver: list[str] = []  # `--approver NAME` (repeatable): room peers who may answer proposals
    # settings given on the command line (the strongest source of agent.config.Config)
    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    mode: Literal["ask", "allow", "plan"] | None = None
    workflow: Literal["auto", "direct", "structured"] | None = None
    reasoning: Literal["off", "low", "medium", "high"] | None = None
    profile: str | None = None
    max_steps: int | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    sandbox: Literal["auto", "bwrap", "off"] | None = None
    trust: bool = False
    # how the front end reports
    json_output: bool = False
    json_format: Literal["ours", "seed"] = "ours"
    no_publish: bool = False
    verbose: bool = False  # `run --verbose`: say which path reaches the model
    until: str | None = None  # `run --until CMD`: keep working until the check passes (agent/subagents/goal.py)
    max_rounds: int = 10  # `run --max-rounds N`: the goal's most rounds

    @property
    def json(self) -> bool:  # type: ignore[override]  # the flag's name (pydantic's json() is deprecated)
        return self.json_output

    @classmethod
    def from_args(cls, args: Any) -> SessionOptions:
        """The options an argparse namespace holds (unknown names stay with the namespace)."""
        values = {k: v for k, v in vars(args).items() if v is not None}
        if "room_id" in values and "room" not in values:
            values["room"] = values["room_id"]
        if "json" in values:
            values["json_output"] = bool(values.pop("json"))
        if values.get("json_format"):
            values["json_output"] = True
        return cls.model_validate(values)
