"""Tool definitions: typed arguments, a kind that decides approval, and a run method.

A tool's argument schema is its pydantic `Args` model; the JSON schema the model sees is derived
from it. Kinds: `read` tools always run; `edit`, `exec` and `network` tools are blocked in plan
mode, asked in ask mode and run in allow mode. Edit tools never write themselves: they compute
whole-file changes (a dry run) that the executor shows for approval and then applies.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.diffing import FileChange
from agent.textsafe import path_problem

if TYPE_CHECKING:
    from agent.events import TodoItem
    from agent.workspaces.base import Workspace

ToolKind = Literal["read", "edit", "exec", "network"]
# The id of the tool call being run (set by the executor): a tool that starts something the front
# ends follow (a subagent) names the call it belongs to. Calls run at once each have their own.
CALL_ID: ContextVar[str] = ContextVar("coder_tui_call_id", default="")


class ToolError(Exception):
    """A failure the model should read and can act on (what was wrong, what is expected)."""


class ToolArgs(BaseModel):
    # defer_build: a tool's validator is built when its first call is checked, not at import (the
    # schema the model is offered comes from agent/tools/schemacache.py on most runs)
    model_config = ConfigDict(extra="forbid", defer_build=True)


class EditArgs(ToolArgs):
    """Arguments of a tool that edits: every edit may say why, and front ends show it with the diff."""

    reason: str = Field(default="",
                        description="Why you make this change, in one short sentence (shown to the user with the diff).")


@dataclass
class Proposal:
    """What a non-read tool is about to do, for the approval view."""

    summary: str
    changes: list[FileChange] = field(default_factory=list)
    command: str | None = None
    cwd: str | None = None
    timeout: int | None = None
    url: str | None = None
    always_ask: str | None = None  # why it is asked in every mode (a page on a local address)


@dataclass
class ToolContext:
    """Everything a tool may touch. One per session; tools keep state here, not globally."""

    workspace: Workspace
    emit: Callable[[Any], None]
    todos: list[TodoItem] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # per-family state (shells, http, ...)


class Tool(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]
    kind: ClassVar[ToolKind] = "read"
    # seed 003: example arguments, shown to models that call tools through text (ReAct) and in `/help TOOL`
    examples: ClassVar[tuple[dict[str, Any], ...]] = ()

    def available(self, workspace: Workspace) -> bool:
        """Whether the model is offered this tool in this workspace."""
        return True

    def key_argument(self, args: dict[str, Any]) -> str:
        """The one argument a compact display shows (a path, a command, a URL)."""
        for key in ("file_path", "path", "command", "url", "pattern", "session_id"):
            if key in args and isinstance(args[key], str):
                return args[key]
        return ""

    async def prepare(self, args: Any, ctx: ToolContext) -> Proposal:
        """Describe what the call would do (non-read tools); may raise ToolError."""
        return Proposal(summary=f"{self.name} {self.key_argument(args.model_dump())}".strip())

    @abstractmethod
    async def run(self, args: Any, ctx: ToolContext) -> str:
        """Do it and return the text the model reads (raise ToolError on failure)."""


class EditTool(Tool):
    """A tool whose effect is a set of file changes computed by `plan`."""

    kind: ClassVar[ToolKind] = "edit"

    def available(self, workspace: Workspace) -> bool:
        return True

    @abstractmethod
    async def plan(self, args: Any, ctx: ToolContext) -> list[FileChange]:
        """The whole-file changes this call makes, without writing anything."""

    async def prepare(self, args: Any, ctx: ToolContext) -> Proposal:
        changes = await self.plan(args, ctx)
        for change in changes:
            problem = path_problem(change.path) if change.old is None else None
            if problem is not None:  # a right-to-left override makes `gpj.exe` read as `exe.jpg`
                raise ToolError(problem)
        if getattr(args, "reason", ""):  # the model's own words beat the tool's description of the edit
            for change in changes:
                change.reason = args.reason
        paths = ", ".join(c.path for c in changes)
        return Proposal(summary=f"{self.name}: {paths}", changes=changes)

    async def run(self, args: Any, ctx: ToolContext) -> str:  # pragma: no cover - executor applies
        raise ToolError("edit tools are applied by the executor")
