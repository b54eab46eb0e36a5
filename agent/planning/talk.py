"""What the workflow says to the models besides planning and steps: the router's context, the
replanning request, and answers to questions asked while a plan runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.events import TextDelta
from agent.llm import LLM
from agent.planning.models import Plan
from agent.planning.planner import retry_hook
from agent.secrets import StreamRedactor

if TYPE_CHECKING:
    from agent.planning.host import PlanHost

CONTEXT_MESSAGES = 6
CONTEXT_CHARS = 600
ANSWER_PROMPT = """You are a coding agent in the middle of carrying out a plan. The user asks a
question meanwhile. Answer it briefly from what you know of the plan and its finished steps; the
plan goes on after your answer, so do not promise changes."""


def conversation_context(session: PlanHost, plan: Plan | None) -> str:
    """The last exchanges (trimmed) and the plan in progress, for the router."""
    lines = []
    for message in session.messages[1:][-CONTEXT_MESSAGES:]:
        if message.get("role") in ("user", "assistant") and message.get("content"):
            lines.append(f"{message['role']}: {str(message['content'])[:CONTEXT_CHARS]}")
    if plan is not None:
        lines.append(f"A plan is in progress. Goal: {plan.refined_goal}\n{plan.outline()}")
    return "Conversation so far:\n" + "\n".join(lines) if lines else ""


def replan_task(plan: Plan, change: str) -> str:
    finished = "\n".join(f"- {s.title}: {s.summary or 'no summary'}" for s in plan.done_steps()) or "(none)"
    return (f"A plan is being carried out.\nGoal: {plan.refined_goal}\n\nPlan:\n{plan.outline()}\n\n"
            f"Finished steps (they stay as they are):\n{finished}\n\nThe user asks for this change:\n{change}\n\n"
            "Submit the refined goal and ONLY the steps that remain to be done after the finished ones.")


async def answer_question(session: PlanHost, llm: LLM, plan: Plan, question: str) -> str:
    """Streams the answer to the chat and returns it (no tools: the plan's steps do the work)."""
    finished = "\n".join(f"- {s.title}: {s.summary}" for s in plan.done_steps()) or "(none yet)"
    messages = [{"role": "system", "content": ANSWER_PROMPT},
                {"role": "user", "content": f"Goal: {plan.refined_goal}\nPlan:\n{plan.outline()}\n"
                                            f"Finished steps:\n{finished}\n\nQuestion: {question}"}]
    masked = StreamRedactor(lambda text: session.emit(TextDelta(text=text)))
    try:
        reply = await session.model_chain(llm).complete(messages, [], masked.feed, retry_hook(session))
    finally:
        masked.flush()
    session.emit(session.totals.add(reply))
    if not reply.text.endswith("\n"):
        session.emit(TextDelta(text="\n"))
    return reply.text
