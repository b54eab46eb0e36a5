"""A setting command applied to a session in this process (agent/session/settings.py does it; the
host applies the same functions to its sessions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.client import commands as cmd
from agent.client.commands import Reply
from agent.session import settings

if TYPE_CHECKING:
    from agent.session.core import AgentSession


def apply_setting(session: AgentSession, command: cmd.Command, by: str, note: Callable[..., None]) -> Reply:
    if isinstance(command, cmd.SetMode):
        before = session.mode
        problem = settings.set_mode(session, command.mode)
        if problem is None and session.mode != before:
            note("mode_changed", mode=session.mode, by=by)
    elif isinstance(command, cmd.SetProfile):
        problem = settings.set_profile(session, command.name)
    elif isinstance(command, cmd.SetModel):
        problem = settings.set_model(session, command.model)
    elif isinstance(command, cmd.SetReasoning):
        problem = settings.set_reasoning(session, command.level)
    else:
        return Reply.refused(f"{type(command).__name__} is not a command a session takes")
    return Reply.refused(problem) if problem else Reply(data={"mode": session.mode})


def decide_plan(session: AgentSession, decision: cmd.PlanDecision) -> Reply:
    data: dict[str, Any] = {"decision": decision.decision, "feedback": decision.feedback}
    if decision.steps is not None:
        data["steps"] = decision.steps
    problem = settings.decide_plan(session, data)
    return Reply.refused(problem, "conflict" if "waits for no" in problem else "invalid") if problem else Reply()
