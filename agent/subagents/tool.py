"""The `agent` tool: the model hands a task to a subagent and reads its report as the result.

Calls of it in one reply run at once (the loop groups a `concurrent` tool's consecutive calls), up
to the configured `max_subagents`; the rest wait for a free slot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from agent.subagents.family import TOOL_NAME, Family
from agent.tools.base import CALL_ID, Tool, ToolArgs, ToolContext, ToolError

if TYPE_CHECKING:
    from agent.session.core import AgentSession
    from agent.workspaces.base import Workspace


VIEWED = ("local", "editor")


class AgentArgs(ToolArgs):
    task: str = Field(min_length=1, description=(
        "The whole task, complete in itself: the subagent sees nothing of this conversation. Say what "
        "to do, where, and what to report."))
    agent: str = Field(default="coder", description="Which agent runs it (a profile or an agent file's name).")
    tools: list[str] | None = Field(default=None, description=(
        "Narrow its tools: names, globs or kinds (read, edit, exec, network, mcp). It never gets more than you have."))
    max_cost: float | None = Field(default=None, gt=0, description="Its own cost limit in dollars (your limit holds too).")
    max_tokens: int | None = Field(default=None, ge=1, description="Its own token limit (your limit holds too).")


class AgentTool(Tool):
    name = TOOL_NAME
    description = (
        "Hand a task to a subagent: a separate agent with its own context that works on it and returns a "
        "report, which is this call's result. Several calls in one reply run in parallel: use it for "
        "independent pieces of work (searching several places, changing separate files)."
    )
    Args = AgentArgs
    concurrent: ClassVar[bool] = True
    examples = ({"task": "Find where the config file is parsed and list the keys it reads.", "agent": "coder",
                 "tools": ["read"]},)

    def __init__(self, family: Family) -> None:
        self.family = family

    def available(self, workspace: Workspace) -> bool:
        # a folder (on disk, or through an editor's buffers) children can have their own views of
        return workspace.kind in VIEWED and workspace.root is not None

    def key_argument(self, args: dict[str, Any]) -> str:
        return f"{args.get('agent', 'coder')}: {str(args.get('task', ''))[:80]}"

    async def run(self, args: AgentArgs, ctx: ToolContext) -> str:
        definition = self.family.definition(args.agent)
        if args.tools is not None and not args.tools:
            raise ToolError("tools is empty: leave it out for the agent's tools, or name some")
        # no model from the model: which model (and so which provider gets the key) is the user's choice
        overrides = {"tools": args.tools, "max_cost": args.max_cost, "max_tokens": args.max_tokens}
        return await self.family.run(definition, args.task, CALL_ID.get(), overrides)


def attach(session: AgentSession, meta: dict[str, Any] | None) -> None:
    """Offer the `agent` tool in a session; not in a subagent's (children have no children), new
    (`meta` names its parent) or resumed."""
    if (meta or {}).get("parent_id") or (session.restored is not None and session.restored.meta.get("parent_id")):
        return
    if session.registry.get(TOOL_NAME) is not None:
        return
    family = Family(session)
    session.ctx.extras["subagents"] = family
    session.registry.register(AgentTool(family))
