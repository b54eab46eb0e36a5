"""A session's settings changed by a front end between turns: mode, agent (profile), model,
reasoning, and the answer to a plan review. Each returns None when applied, else why not (a
front end refuses the request with it). Shared by the handle of a session in this process
(agent/client/local.py) and the session host (agent/host/live.py), so both refuse alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.session.core import AgentSession

MODES = ("plan", "ask", "allow")


def set_mode(session: AgentSession, mode: str) -> str | None:
    if mode not in MODES:
        return f"unknown mode {mode[:30]!r} (plan, ask or allow)"
    session.mode = mode  # type: ignore[assignment]  # one of MODES
    return None


def set_profile(session: AgentSession, name: str) -> str | None:
    from agent.profiles import ProfileError

    try:
        session.agent.use_profile(name)
    except ProfileError as exc:
        return str(exc)
    return None


def set_model(session: AgentSession, model: str) -> str | None:
    if not model.strip():
        return "the model name is empty"
    session.model = model.strip()
    return None


def set_reasoning(session: AgentSession, level: str) -> str | None:
    from agent.llm.reasoning import LEVELS

    if level not in LEVELS:
        return f"reasoning is one of {', '.join(LEVELS)} (got {level[:30]!r})"
    session.reasoning = level
    return None


def decide_plan(session: AgentSession, data: dict[str, Any]) -> str | None:
    """Answer the plan review (or failed step) the running turn waits for."""
    from pydantic import ValidationError

    from agent.planning.review import PlanDecision

    reviewer = session.plan_reviewer
    if getattr(reviewer, "waiting", None) is None:
        return "the session waits for no plan decision"
    try:
        reviewer.resolve(PlanDecision.model_validate(data))  # type: ignore[attr-defined]  # a QueueReviewer
    except (ValidationError, ValueError) as exc:
        return str(exc).splitlines()[0]
    return None
