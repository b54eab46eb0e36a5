"""Which tools a profile and a mode offer the model.

A profile's `tools` are selectors: a tool name (`read_file`), a glob (`mcp__github__*`), or a kind
(`read`, `edit`, `exec`, `network`, `mcp`). Kinds and globs pick from the default tools and the
MCP tools; tools outside the default set (such as the read-only `git`) are offered only to a
profile that names them. The mode narrows further: plan mode offers read tools only, so the model
never sees a tool it may not use.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from typing import Any

from agent.events import Mode
from agent.profiles import KINDS, Profile
from agent.tools.base import Tool
from agent.tools import schemacache
from agent.tools.registry import ToolRegistry, parameters_schema
from agent.workspaces.base import Workspace


def family(tool: Tool) -> str:
    """The kind a selector matches: persistent-shell tools belong with exec even when they only read."""
    if getattr(tool, "mcp_server", None):
        return "mcp"
    if tool.name.startswith("shell_"):
        return "exec"
    return tool.kind


def selected(tool: Tool, selectors: Iterable[str], named_only: bool) -> bool:
    for selector in selectors:
        if selector == tool.name:
            return True
        if named_only:
            continue
        if selector in KINDS and family(tool) == selector:
            return True
        if selector not in KINDS and any(c in selector for c in "*?[") and fnmatch.fnmatchcase(tool.name, selector):
            return True
    return False


def mode_allows(tool: Tool, mode: Mode) -> bool:
    return mode != "plan" or (tool.kind == "read" and family(tool) != "exec")


def offered(registry: ToolRegistry, workspace: Workspace, profile: Profile, mode: Mode,
            extras: Iterable[str] = ()) -> list[Tool]:
    """The tools the model is offered, in registry order. `extras`: names outside the default set."""
    if profile.agent == "stream":
        return []
    named_only = set(extras)
    return [t for t in registry.offered(workspace)
            if selected(t, profile.tools, t.name in named_only) and mode_allows(t, mode)]


def profile_allows(tool: Tool, profile: Profile, extras: Iterable[str] = ()) -> bool:
    """Whether the profile lets the model call this tool at all (whatever the mode)."""
    return profile.agent != "stream" and selected(tool, profile.tools, tool.name in set(extras))


def schema_of(tool: Tool) -> dict[str, Any]:
    """The function schema the model sees (an MCP tool brings its own JSON schema)."""
    parameters = getattr(tool, "input_schema", None) or parameters_schema(tool.Args)
    return {"type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": parameters}}


def schemas(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    return [schema_of(tool) for tool in tools]


class Schemas(list):  # type: ignore[type-arg]
    """Tool schemas that know their JSON length (compaction's estimate need not serialise them)."""

    chars: int = 0

    @classmethod
    def from_text(cls, text: str) -> Schemas:
        # a fresh copy per request: adapters may change what they send
        made = cls(json.loads(text))
        made.chars = len(text)
        return made


class SchemaCache:
    """The offered tools' schemas as JSON text, built again only when the offer changes (a mode
    or profile switch, an MCP server's tools arriving or leaving)."""

    def __init__(self) -> None:
        self._key: tuple[int, ...] = ()
        self._tools: list[Tool] = []  # keeps the keyed tools alive, so their ids stay theirs
        self._text = "[]"

    def __call__(self, tools: list[Tool]) -> Schemas:
        key = tuple(id(tool) for tool in tools)
        if key != self._key:
            self._key, self._tools = key, list(tools)
            self._text = json.dumps(schemas(tools), ensure_ascii=False)
            schemacache.flush()
        return Schemas.from_text(self._text)
