"""The orchestrator (the project manager): runs a plan's steps in order, one executor loop each.

Each step is today's loop (agent/loop.py) with a fresh conversation: the goal, the plan, the
summaries of the finished steps, and the step. Its tool calls become `agent_action` traces; its
streamed text stays out of the chat (the summary is the step's answer). A failed step (an error
or the step limit) runs once more with the failure in context; then ask mode lets the user retry,
skip or stop, other modes stop with a report. Messages sent while the plan runs are routed
between steps: a plan change replans the remaining steps, a question is answered on the spot.
The plan is saved in the session record after every change, so `--resume` continues it.
"""

from __future__ import annotations

from typing import Any, Literal

from agent.events import (AgentAction, Complete, PlanCreated, StepComplete, StepStart, TextDelta, ToolCallEvent,
                          ToolResultEvent)
from agent.executor import Executor
from agent.llm import LLM
from agent.planning.host import PlanHost, ask
from agent.planning.models import Plan, Step

PLAN_STATE = "plan"
SILENT = (TextDelta, Complete)  # a step's answer is its summary, not chat text
StepEnd = Literal["done", "skipped", "stop", "stopped"]

STEP_PROMPT = """You are carrying out one step of a plan.

Goal: {goal}

Plan:
{outline}

Finished steps:
{finished}

Your step ({number} of {total}): {title}
{description}
{retry}
Do this step only (later steps come after you). When it is done, answer with a short summary of
what you did and found: it is all the next steps will know of your work."""


class StepExecutor(Executor):
    """One checkpoint per plan step (not per model turn), so /undo rolls back one step."""

    def __init__(self, base: Executor, label: str) -> None:
        super().__init__(base.registry, base.ctx, base.gate, base.checkpoint)
        self.permits = base.permits  # the profile's tool scope
        self.limit = lambda tool: base.limit(tool)  # a room peer's limits, as the base has them when the call runs
        self.touched = base.touched
        self.diagnose = base.diagnose  # the language servers' word on each change
        self.label = label

    def new_turn(self, label: str) -> None:
        self.step_label = self.label


def save(session: PlanHost, plan: Plan) -> None:
    session.state[PLAN_STATE] = plan.model_dump()
    session.record_state(PLAN_STATE, plan.model_dump())


def saved_plan(session: PlanHost) -> Plan | None:
    """The session's plan when it has unfinished steps."""
    data = session.state.get(PLAN_STATE)
    if not data:
        return None
    plan = Plan.model_validate(data)
    return plan if plan.current() is not None else None


def publish(session: PlanHost, plan: Plan) -> None:
    save(session, plan)
    session.emit(PlanCreated(plan=plan.info()))


class Orchestrator:
    def __init__(self, session: PlanHost, llm: LLM, plan: Plan, inbox: Any) -> None:
        self.session = session
        self.llm = llm
        self.plan = plan
        self.inbox = inbox  # awaitable hook: routes the messages sent while the plan runs
        self.stop_reason = ""
        self.budget_spent = False  # the run stopped because the turn's token or cost budget is spent

    async def run(self) -> bool:
        """Runs the unfinished steps; False when the run stopped (see `stop_reason`)."""
        while (step := self.plan.current()) is not None:
            self.plan = await self.inbox(self.plan)
            step = self.plan.current()
            if step is None:
                break
            end = await self._step(step)
            if end in ("stop", "stopped"):
                return False
        return True

    async def _step(self, step: Step) -> StepEnd:
        step.status, step.summary = "in_progress", ""
        save(self.session, self.plan)
        self.session.emit(StepStart(step_id=step.id, title=step.title))
        failure = ""
        for attempt in range(2):
            complete = await self._attempt(step, failure, attempt)
            end = self._settle(step, complete)
            if end is not None:
                return end
            failure = complete.final_response
        return await self._failed(step, failure)

    async def _failed(self, step: Step, failure: str) -> StepEnd:
        self._finish(step, "failed", failure)
        while self.session.mode == "ask":
            decision = await ask(self.session, "failed_step", self.plan, step_id=step.id, error=failure)
            if decision.decision == "skip":
                return self._finish(step, "skipped", step.summary)
            if decision.decision != "retry":
                break
            self.session.emit(StepStart(step_id=step.id, title=step.title))
            complete = await self._attempt(step, failure, 1)
            end = self._settle(step, complete)
            if end is not None:
                return end
            failure = complete.final_response
            self._finish(step, "failed", failure)
        self.stop_reason = f"step {self._number(step)} ({step.title}) failed: {_gist(failure)}"
        return "stop"

    def _settle(self, step: Step, complete: Complete) -> StepEnd | None:
        """What an attempt's end means for the step: stopped, done, or None when it failed."""
        if complete.completion_reason == "stopped":
            self.stop_reason = "stopped by the user"
            return "stopped"
        if complete.completion_reason == "budget":  # the turn's budget: no retry can spend more
            self._finish(step, "failed", complete.final_response)
            self.stop_reason, self.budget_spent = _gist(complete.final_response), True
            return "stop"
        if complete.success:
            return self._finish(step, "done", complete.final_response)
        return None

    def _finish(self, step: Step, status: Literal["done", "failed", "skipped"], summary: str) -> StepEnd:
        step.status, step.summary = status, summary.strip()
        save(self.session, self.plan)
        self.session.emit(StepComplete(step_id=step.id, status=status, summary=step.summary))
        return "skipped" if status == "skipped" else "done"

    async def _attempt(self, step: Step, failure: str, attempt: int) -> Complete:
        session = self.session
        messages = [{"role": "system", "content": session.messages[0]["content"]},
                    {"role": "user", "content": self._prompt(step, failure if attempt else "")}]
        executor = StepExecutor(session.executor, f"plan step {self._number(step)}: {step.title}"[:120])
        base_emit = session.ctx.emit
        session.ctx.emit = self._traced(step, base_emit)
        try:
            run = await session.new_run(self.llm, messages, executor=executor, emit=self._quiet,
                                        record=lambda _message: None)
            return await run.execute()
        finally:
            session.ctx.emit = base_emit

    def _quiet(self, event: Any) -> None:
        if not isinstance(event, SILENT):
            self.session.emit(event)

    def _traced(self, step: Step, emit: Any) -> Any:
        def traced(event: Any) -> None:
            emit(event)
            if isinstance(event, ToolCallEvent):
                emit(AgentAction(step_id=step.id, tool=event.tool, status="running"))
            elif isinstance(event, ToolResultEvent):
                emit(AgentAction(step_id=step.id, tool=event.tool, status="success" if event.ok else "error"))
        return traced

    def _prompt(self, step: Step, failure: str) -> str:
        finished = "\n".join(f"- {s.title} ({s.status}): {s.summary or 'no summary'}"
                             for s in self.plan.done_steps()) or "(none yet)"
        retry = (f"\nA previous attempt at this step failed:\n{failure.strip()}\nAvoid what went wrong.\n"
                 if failure else "")
        return STEP_PROMPT.format(goal=self.plan.refined_goal, outline=self.plan.outline(step.id),
                                  finished=finished, number=self._number(step), total=len(self.plan.steps),
                                  title=step.title, description=step.description or "", retry=retry)

    def _number(self, step: Step) -> int:
        return self.plan.steps.index(step) + 1


def _gist(text: str) -> str:
    """The last line of a failed attempt's answer: where the loop says why it ended."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no answer"
