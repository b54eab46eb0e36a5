"""PlanHost: what the structured workflow needs from the session it runs in (and `ask`, its
question to the session's plan reviewer).

Planning builds no runs and chooses no models of its own: it asks its host. `new_run` is the
session's one run factory (the turn's token and cost budget, compaction, fallback models and the
profile's tools and agent type), the same for a plan step as for a direct prompt; the planner's
own loop takes the same `model_chain` and `turn_budget`; `small_llm` is the profile's small
model (the router's). `agent.session.core.AgentSession` is the host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from agent.events import PlanDecisionRequired
from agent.planning.models import Plan
from agent.planning.review import PlanDecision, PlanReviewer, ReviewKind

if TYPE_CHECKING:
    from agent.agents import IterativeRun
    from agent.approval import ApprovalGate
    from agent.events import Complete, Mode
    from agent.executor import Executor
    from agent.llm import LLM
    from agent.loop import Totals
    from agent.modelchain import Budget, ModelChain
    from agent.tools.base import Tool, ToolContext
    from agent.workspaces.base import Workspace

Emit = Callable[[Any], None]
Record = Callable[[dict[str, Any]], None]


class PlanHost(Protocol):
    workspace: Workspace
    executor: Executor
    gate: ApprovalGate
    ctx: ToolContext
    totals: Totals
    messages: list[dict[str, Any]]
    state: dict[str, Any]
    inbox: list[str]
    plan_running: bool
    plan_reviewer: PlanReviewer

    @property
    def session_id(self) -> str: ...

    @property
    def mode(self) -> Mode: ...

    def emit(self, event: Any) -> None: ...

    def record_state(self, key: str, value: Any) -> None: ...

    def remember(self, message: dict[str, Any]) -> None:
        """Append a message to the main conversation and its record."""
        ...

    def offered_tools(self) -> list[Tool]:
        """The tools the profile and the mode offer now."""
        ...

    def small_llm(self) -> LLM: ...

    def model_chain(self, llm: LLM) -> ModelChain:
        """`llm` with the session's fallback models: the planner's own loop fails over as a run does."""
        ...

    def turn_budget(self) -> Budget | None:
        """The running turn's token and cost budget: the planner spends from it as the runs do."""
        ...

    async def new_run(self, llm: LLM, messages: list[dict[str, Any]], *, executor: Executor | None = None,
                      emit: Emit | None = None, record: Record | None = None) -> IterativeRun: ...

    async def run_direct(self, llm: LLM, prompt: str) -> Complete: ...


async def ask(host: PlanHost, kind: ReviewKind, plan: Plan, step_id: str | None = None,
              error: str | None = None) -> PlanDecision:
    """Tell the front ends the run waits for a decision, and wait for the host's reviewer."""
    host.emit(PlanDecisionRequired(kind=kind, plan=plan.info(), step_id=step_id, error=error))
    return await host.plan_reviewer.decide(kind)
