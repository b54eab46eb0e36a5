"""open_session(): the one place an `AgentSession` is assembled.

Every front end (the app, `run`, `room`, `serve`, `acp`) and every scheduled task opens its
session here, so a setting applied here reaches them all: the tool registry (the target's, plus
the tools a profile may name), the approval gate and executor, the agent setup (profile, tools,
limits, MCP), the shell sandbox policy, the plan reviewer, the approver's binding and the
target's binding (GitHub state, a room's triggers).

    target = await open_target(spec, config, emit=sink)
    session = open_session(target, config, SessionPorts(approver, sink), resume=spec.resume)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.config import Config
from agent.events import WarningEvent
from agent.session.core import AgentSession
from agent.session.ports import SessionPorts
from agent.session.record import SessionStore
from agent.permissions import check as permissions
from agent.tools import sandbox

if TYPE_CHECKING:
    from agent.session.target import Target
    from agent.workspaces.base import Workspace


def open_session(target: Target, config: Config, ports: SessionPorts, *, resume: str | None = None,
                 store: SessionStore | None = None, meta: dict[str, Any] | None = None,
                 workspace: Workspace | None = None) -> AgentSession:
    """A new session on `target` (or, with `resume` = an id, a prefix or `last`, the continuation of a
    recorded one), finished and bound: ready to `run`.

    `meta` joins the target's in the session file's header; `workspace` replaces the target's for
    this session (serve's overlay of a client's files). Raises SessionError (a bad `resume`) and
    ProfileError (a bad profile) before anything is written.
    """
    session = AgentSession.open(config, workspace or target.workspace, ports.approver, ports.sink,
                                resume=resume, store=store, registry=target.registry(),
                                meta={**target.meta, **(meta or {})})
    sandbox.configure(session)
    for name in session.registry.configure(config.tools):
        session.emit(WarningEvent(message=f"[tools.{name}] in the config names no tool: use the names the "
                                          f"model sees, such as bash_exec or read_file"))
    permissions.attach(session)
    from agent.subagents.tool import attach as offer_subagents

    offer_subagents(session, meta)
    if ports.reviewer is not None:
        session.plan_reviewer = ports.reviewer
    for port in (ports.approver, ports.reviewer):
        attach = getattr(port, "attach", None)
        if callable(attach):
            attach(session)
    target.attach(session)
    return session
