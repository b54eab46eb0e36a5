"""The final report: one last model call that streams Markdown to the chat, or (when the run
stops on a failure) a report written without the model, which may be what failed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.events import TextDelta
from agent.llm import LLM
from agent.loop import MarkerFilter, strip_markers
from agent.planning.models import Plan
from agent.planning.planner import retry_hook
from agent.secrets import StreamRedactor

if TYPE_CHECKING:
    from agent.planning.host import PlanHost

PROMPT = """You write the final report of a coding task that was carried out step by step.
In Markdown, briefly: what was done (files, behaviour), what was checked, and anything left open
or failed. Base it only on the step summaries given; do not invent work."""


def outcome(plan: Plan) -> str:
    lines = [f"Goal: {plan.refined_goal}", ""]
    for number, step in enumerate(plan.steps, 1):
        lines.append(f"{number}. {step.title} [{step.status}]: {step.summary or '(no summary)'}")
    return "\n".join(lines)


async def write_report(session: PlanHost, llm: LLM, plan: Plan) -> str:
    """Streams the report as `text_delta` events and returns its text."""
    messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": outcome(plan)}]
    masked = StreamRedactor(lambda text: session.emit(TextDelta(text=text)))
    stream = MarkerFilter(masked.feed)
    try:
        reply = await session.model_chain(llm).complete(messages, [], stream.feed, retry_hook(session))
    finally:
        stream.flush()
        masked.flush()
    session.emit(session.totals.add(reply))
    return strip_markers(reply.text)


def stopped_report(plan: Plan, why: str, session_id: str) -> str:
    """What a run that stopped on a failed step tells the user (no model call)."""
    done = [s for s in plan.steps if s.status in ("done", "skipped")]
    left = [s for s in plan.steps if s.status not in ("done", "skipped")]
    lines = [f"**The plan stopped:** {why}", ""]
    if done:
        lines += ["Finished:", *(f"- {s.title} ({s.status}): {s.summary or 'no summary'}" for s in done), ""]
    lines += ["Not done:", *(f"- {s.title} ({s.status})" for s in left), "",
              f"Continue at the first unfinished step with `coder-tui run --resume {session_id}`."]
    return "\n".join(lines)


def emit_text(session: PlanHost, text: str) -> None:
    session.emit(TextDelta(text=text))
