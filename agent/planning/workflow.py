"""The structured workflow's entry: route the message, plan, review, run the steps, report.

Model calls, each its own conversation, in this order: the router (auto only, when no rule
decided), the planner loop, one executor loop per step, the report.
"""

from __future__ import annotations

from typing import Any

from agent.events import ClassificationEvent, Complete, ErrorEvent
from agent.llm import LLM, LLMError
from agent.modelchain import BudgetExceeded
from agent.planning.host import PlanHost, ask
from agent.planning.intents import schedule_note
from agent.planning.models import Classification, Plan, PlanDraft
from agent.planning.orchestrator import Orchestrator, publish, saved_plan
from agent.planning.planner import Planner, PlanningError
from agent.planning.report import emit_text, stopped_report, write_report
from agent.planning.router import by_rule, classify
from agent.planning.talk import answer_question, conversation_context, replan_task


async def run_workflow(session: PlanHost, llm: LLM, prompt: str, workflow: str) -> Complete:
    """One user turn under `auto` or `structured` (an empty prompt continues the saved plan)."""
    plan = saved_plan(session)
    try:
        if not prompt.strip():
            if plan is None:
                return _end(session, False, "There is no unfinished plan to continue.", "error", 0)
            return await _continue(session, llm, plan, workflow)
        if workflow == "direct":  # only an approval of the unfinished plan (`ok`) runs it
            kind = by_rule(prompt, True)
            if plan is None or kind is None or kind.task_type != "confirmation":
                return await session.run_direct(llm, prompt)
        kind = await route(session, prompt, plan, workflow)
        if kind.task_type == "schedule":  # the small model's verdict: steered to schedule_task
            return await session.run_direct(llm, prompt + schedule_note(None))
        if kind.task_type == "confirmation" and plan is not None:
            _remember(session, "user", prompt)
            return await _continue(session, llm, plan, workflow)
        if kind.task_type == "plan_change" and plan is not None:
            _remember(session, "user", prompt)
            return await _planned(session, llm, replan_task(plan, prompt), plan, workflow)
        if kind.task_type == "new_task" and (kind.needs_plan or workflow == "structured"):
            _remember(session, "user", prompt)
            return await _planned(session, llm, prompt, None, workflow)
    except BudgetExceeded as exc:  # spent while planning: the turn ends as a run that spent it does
        return _end(session, False, str(exc), "budget", 0)
    except (LLMError, PlanningError) as exc:
        session.emit(ErrorEvent(message=str(exc), recoverable=False,
                                configuration=isinstance(exc, LLMError) and exc.configuration))
        return _end(session, False, str(exc), "error", 0)
    return await session.run_direct(llm, prompt)


async def route(session: PlanHost, text: str, plan: Plan | None, workflow: str) -> Classification:
    """Rules first; then the small model (auto), or a plan (structured)."""
    kind = by_rule(text, plan is not None)
    if kind is None and workflow == "auto":
        context = conversation_context(session, plan)
        kind = await classify(session.small_llm(), text, context, session.totals.add)
    if kind is None:
        kind = Classification(task_type="plan_change" if plan is not None else "new_task", needs_plan=True)
    session.emit(ClassificationEvent(task_type=kind.task_type))
    return kind


async def _planned(session: PlanHost, llm: LLM, task: str, old: Plan | None, workflow: str) -> Complete:
    plan = await make_plan(session, llm, task, old)
    if plan is None:
        return _end(session, False, "The plan was not approved; nothing was run.", "stopped", 0)
    if session.mode == "plan":
        return _end(session, True, plan.markdown(), "answered", 0)
    return await _carry_out(session, llm, plan, workflow)


async def make_plan(session: PlanHost, llm: LLM, task: str, old: Plan | None) -> Plan | None:
    """A new plan (or, with `old`, new remaining steps after its finished ones), reviewed in ask
    mode; None when the user stopped at the review."""
    planner = Planner(session, llm)
    plan = _build(await planner.plan(task), old)
    publish(session, plan)
    while session.mode == "ask":
        decision = await ask(session, "review", plan)
        if decision.decision == "approve":
            break
        if decision.decision == "edit" and decision.steps:
            plan = _build(PlanDraft(refined_goal=plan.refined_goal, steps=decision.steps), old)
            publish(session, plan)
            break
        if decision.decision != "feedback":
            return None
        plan = _build(await planner.plan(_with_feedback(task, plan, decision.feedback or "")), old)
        publish(session, plan)
    return plan


def _build(draft: PlanDraft, old: Plan | None) -> Plan:
    if old is None:
        return Plan.from_draft(draft)
    return Plan.from_draft(draft, kept=old.done_steps(), next_id=old.next_id)


def _with_feedback(task: str, plan: Plan, feedback: str) -> str:
    return (f"{task}\n\nYour previous plan:\n{plan.outline()}\n\nThe user's feedback on it:\n{feedback}\n"
            "Submit a new plan that takes the feedback into account.")


async def _continue(session: PlanHost, llm: LLM, plan: Plan, workflow: str) -> Complete:
    """An unfinished plan (resumed, or confirmed after plan mode) runs from its first unfinished step."""
    publish(session, plan)
    if session.mode == "plan":
        return _end(session, True, plan.markdown(), "answered", 0)
    return await _carry_out(session, llm, plan, workflow)


async def _carry_out(session: PlanHost, llm: LLM, plan: Plan, workflow: str) -> Complete:
    session.plan_running = True
    try:
        orchestrator = Orchestrator(session, llm, plan, lambda current: _inbox(session, llm, current, workflow))
        finished = await orchestrator.run()
    finally:
        session.plan_running = False
    plan = orchestrator.plan
    steps = sum(s.status == "done" for s in plan.steps)
    if not finished:
        if orchestrator.stop_reason == "stopped by the user":
            return _end(session, False, "Stopped by the user.", "stopped", steps)
        text = stopped_report(plan, orchestrator.stop_reason, session.session_id)
        emit_text(session, text)
        _remember(session, "assistant", text)
        return _end(session, False, text, "budget" if orchestrator.budget_spent else "error", steps)
    report = await write_report(session, llm, plan)
    _remember(session, "assistant", report)
    return _end(session, True, report, "answered", steps)


async def _inbox(session: PlanHost, llm: LLM, plan: Plan, workflow: str) -> Plan:
    """Routes the messages sent while the plan ran (between steps)."""
    while session.inbox:
        text = session.inbox.pop(0)
        kind = await route(session, text, plan, workflow)
        _remember(session, "user", text)
        if kind.task_type == "question":
            _remember(session, "assistant", await answer_question(session, llm, plan, text))
        elif kind.task_type != "confirmation":
            plan = await make_plan(session, llm, replan_task(plan, text), plan) or plan
    return plan


def _remember(session: PlanHost, role: str, text: str) -> None:
    """The main conversation keeps the user's messages and the answers (follow-ups see them)."""
    session.remember({"role": role, "content": text})


def _end(session: PlanHost, success: bool, text: str, reason: str, steps: int) -> Complete:
    event = Complete(success=success, iterations=steps, final_response=text,
                     completion_reason=reason)  # type: ignore[arg-type]
    session.emit(event)
    return event
