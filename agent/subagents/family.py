"""A parent session's children: each a session of its own (own context, recorded with its parent's
id, resumable), run at most `max_subagents` at once, never with more than the parent has.

- Mode and tools: at most the parent's (the narrower mode; the parent's offered tools, narrowed by
  the agent's and the call's selectors; no `agent` tool, so children have no children).
- Spend: a child's totals join the parent turn's budget, and the child's budget checks the
  parent's before each request: the parent's --max-cost/--max-tokens hold for the family.
- Approvals: the child asks the parent's approver; the request reaches the parent's stream
  naming the child and its task (relay.py), and is answered there once.
- Files: each child has its own view of the folder (its reads are its own, so a file another child
  changed since is refused as stale and re-read); writes are checked and made under a per-file
  lock (agent/workspaces/local.py); the parent's checkpoints take the children's edits, so undo
  covers them.
- Stop: stopping the parent cancels the tool calls, and each child is stopped cleanly.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.approval import ApprovalRequest, Decision
from agent.events import Complete, Mode, SubagentFinished, SubagentStarted, WarningEvent
from agent.profiles.toolset import selected
from agent.subagents.definitions import MODES, AgentDef, AgentSet, load_agents
from agent.subagents.relay import Relay
from agent.tools.base import Tool, ToolError

if TYPE_CHECKING:
    from agent.session.core import AgentSession

TOOL_NAME = "agent"


class ParentApprover:
    """A child's approver: the parent's (no `attach`: the parent's stays bound to the parent),
    asked with the request naming the child and its task."""

    def __init__(self, parent: AgentSession, relay: Relay) -> None:
        self.parent = parent
        self.relay = relay

    async def decide(self, request: ApprovalRequest) -> Decision:
        named = request.model_copy(update=self.relay.naming())
        return await self.parent.gate.approver.decide(named)


def narrower(*modes: Mode | None) -> Mode:
    given = [m for m in modes if m is not None]
    return min(given, key=MODES.index) if given else "ask"


@dataclass
class Child:
    session: AgentSession
    definition: AgentDef
    task: str
    relay: Relay
    started: float = field(default_factory=time.time)
    complete: Complete | None = None


class Family:
    def __init__(self, parent: AgentSession) -> None:
        self.parent = parent
        self.slots = asyncio.Semaphore(parent.config.max_subagents)
        self.live: dict[str, Child] = {}
        self.all: dict[str, Child] = {}  # every child of this session, finished ones too (the live view)
        self.count = 0
        self._agents: AgentSet | None = None

    @property
    def agents(self) -> AgentSet:
        if self._agents is None:
            p = self.parent
            self._agents = load_agents(p.agent.profiles, p.workspace.root, p.config.workspace_trusted)
            for note in self._agents.notes:
                p.emit(WarningEvent(message=note))
        return self._agents

    def definition(self, name: str) -> AgentDef:
        found = self.agents.get(name)
        if found is None:
            raise ToolError(f"no agent {name!r}; the agents are: {self.agents.listing()}")
        return found

    def listing(self) -> list[dict[str, Any]]:
        """Each child of this session: working, waiting (and on what), done or failed, with its spend."""
        return [{"session_id": c.session.session_id, "agent": c.definition.name, "task": c.task[:200],
                 "status": c.relay.status, "tool": c.relay.tool, "detail": c.relay.detail,
                 "tokens": c.relay.tokens, "cost": c.relay.cost} for c in self.all.values()]

    async def run(self, definition: AgentDef, task: str, call_id: str, overrides: dict[str, Any]) -> str:
        """Run a child on `task` to its end (waiting for a free slot first); its report."""
        async with self.slots:
            child = self._open(definition, task, overrides)
            try:
                return await self._drive(child, call_id)
            finally:
                self.live.pop(child.session.session_id, None)
                await child.session.close(keep_workspace=False)

    async def _drive(self, child: Child, call_id: str) -> str:
        s, parent = child.session, self.parent
        child.relay.call_id = call_id
        parent.emit(SubagentStarted(child_id=s.session_id, parent_id=parent.session_id, call_id=call_id,
                                    agent=child.definition.name, task=child.task, model=s.config.model or "",
                                    mode=s.mode))
        running = asyncio.create_task(s.run(_prompt(child.definition, child.task)))
        try:
            child.complete = await asyncio.shield(running)
        except asyncio.CancelledError:
            s.stop()  # the parent was stopped: the child ends as stopped, recorded
            child.complete = await _settled(running)
            self._finished(child, call_id)
            raise
        except Exception as exc:  # noqa: BLE001 - the parent's model reads why its child failed
            self._finished(child, call_id)
            raise ToolError(f"the subagent failed: {type(exc).__name__}: {exc}") from None
        self._finished(child, call_id)
        return _report(child)

    def _finished(self, child: Child, call_id: str) -> None:
        done, totals = child.complete, child.session.totals
        child.relay.status = "done" if done is not None and done.success else "failed"
        child.relay.detail = "" if done is None or done.success else done.completion_reason
        child.relay.tokens, child.relay.cost = totals.prompt_tokens + totals.completion_tokens, totals.cost
        self.parent.emit(SubagentFinished(
            child_id=child.session.session_id, parent_id=self.parent.session_id, call_id=call_id,
            ok=bool(done and done.success), reason=done.completion_reason if done else "stopped",
            report=(done.final_response if done else "")[:4000], tokens=totals.prompt_tokens + totals.completion_tokens,
            cost=totals.cost, started=child.started, ended=time.time()))

    def _open(self, definition: AgentDef, task: str, overrides: dict[str, Any]) -> Child:
        from agent.session.open import open_session
        from agent.session.ports import SessionPorts
        from agent.session.target import Target

        parent = self.parent
        self.count += 1
        relay = Relay(parent.emit, parent.session_id, f"{definition.name} #{self.count}: {task[:80]}")
        config = parent.config.model_copy(update={
            "profile": definition.profile, "workflow": "direct",
            "model": definition.model or parent.config.model,
            "max_cost": overrides.get("max_cost"), "max_tokens": overrides.get("max_tokens")})
        view = parent.workspace.view()  # type: ignore[attr-defined]  # the tool is offered only where there is one
        session = open_session(Target(view), config,
                               SessionPorts(ParentApprover(parent, relay), relay),
                               meta={"parent_id": parent.session_id, "agent": definition.name, "task": task[:500]})
        relay.child_id = session.session_id
        self._bind(session, definition, overrides.get("tools"))
        child = Child(session, definition, task, relay)
        self.live[session.session_id] = self.all[session.session_id] = child
        return child

    def _bind(self, session: AgentSession, definition: AgentDef, tools: list[str] | None) -> None:
        parent = self.parent
        session.route_intents = False
        session.gate.mode = narrower(parent.mode, definition.mode, session.agent.profile.mode)
        allowed = {t.name for t in parent.offered_tools()} - {TOOL_NAME}
        selectors = [list(s) for s in (definition.tools, tools) if s]

        def scope(tool: Tool) -> bool:
            return tool.name in allowed and all(selected(tool, chosen, False) for chosen in selectors)

        session.agent.scope = scope
        session.agent.spends_for = lambda: (parent._budget, parent.totals) if parent._budget else None
        if parent._budget is not None:
            parent._budget.shared.append(session.totals)
        session.executor.diagnose = parent.executor.diagnose  # the parent's language servers, not one set a child
        if parent.checkpoints is not None:  # the parent's undo covers the children's edits
            session.checkpoints = parent.checkpoints
            session.executor.checkpoint = parent._checkpoint
            session.executor.touched = parent.checkpoints.note_touched


def _prompt(definition: AgentDef, task: str) -> str:
    head = f"{definition.prompt}\n\n" if definition.prompt else ""
    return (f"{head}You are a subagent: another agent handed you this task. Do it, then answer with a "
            f"short report of what you did and found; that answer is all it sees.\n\nTask: {task}")


def _report(child: Child) -> str:
    done = child.complete
    if done is None:
        return "The subagent ended without a report."
    if done.success:
        return done.final_response or "(the subagent gave an empty report)"
    return f"The subagent did not finish ({done.completion_reason}): {done.final_response}"


async def _settled(task: asyncio.Task[Complete]) -> Complete | None:
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        try:  # the caller was cancelled again while the child wound down: wait for it all the same
            return await task
        except BaseException:  # noqa: BLE001 - a child that failed while stopping has no report
            return None
    except Exception:  # noqa: BLE001
        return None
