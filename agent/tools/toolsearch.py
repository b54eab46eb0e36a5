"""More tools than the provider takes: the rest offered through one search tool, never a refused request.

OpenAI refuses a request with more than 128 tools; 25 built-in tools and a few MCP servers pass
that. When the tools on offer exceed the limit of the model's route (agent/llm/routing.py), the
built-in tools stay, `tool_search` takes one place, and the MCP tools fill the places left in
their own order; the others wait on the shelf. The model searches those by words of their name or
description, and the best matches become callable from its next step on (taking the places of
the last MCP tools offered; the most recently found win when they do not all fit). The session
says so once, as a warning every front end shows (AgentSetup.offered).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext
from agent.workspaces.base import Workspace

FOUND_AT_ONCE = 5  # tools a search loads
DESCRIBED = 200  # characters of each found tool's description shown


class ToolShelf:
    """The tools not offered directly, and the ones the model has found (in the order found)."""

    def __init__(self) -> None:
        self.waiting: list[Tool] = []
        self.found: list[str] = []
        self.active = False

    def fit(self, tools: list[Tool], limit: int, search: Tool) -> list[Tool]:
        """`tools` as at most `limit` tools: the built-in ones, `search`, then the MCP tools found
        and as many others as fit, in their own order; the rest wait for a search."""
        tools = [t for t in tools if t is not search]
        self.active = len(tools) > limit
        if not self.active:
            self.waiting = []
            return tools
        kept = [t for t in tools if not getattr(t, "mcp_server", None)]
        shelved = [t for t in tools if getattr(t, "mcp_server", None)]
        if len(kept) >= limit:
            kept, shelved = kept[: limit - 1], kept[limit - 1:] + shelved
        room = limit - 1 - len(kept)
        names = {t.name for t in shelved}
        found = {name for name in [n for n in self.found if n in names][-room:]} if room > 0 else set()
        others = [t.name for t in shelved if t.name not in found][: room - len(found)]
        offered = found | set(others)
        self.waiting = [t for t in shelved if t.name not in offered]
        return [*kept, search, *(t for t in shelved if t.name in offered)]

    def search(self, query: str) -> list[Tool]:
        """The waiting tools that match `query` best (each word found in the name or description)."""
        words = [w for w in re.split(r"[\s,;]+", query.lower()) if w]
        scored = []
        for position, tool in enumerate(self.waiting):
            name, text = tool.name.lower(), f"{tool.name} {tool.description}".lower()
            score = sum(3 if word in name else 1 for word in words if word in text)
            if score:
                scored.append((-score, position, tool))
        chosen = [tool for _, _, tool in sorted(scored, key=lambda item: item[:2])[:FOUND_AT_ONCE]]
        for tool in chosen:
            if tool.name in self.found:
                self.found.remove(tool.name)
            self.found.append(tool.name)
        return chosen


class SearchArgs(ToolArgs):
    query: str = Field(description="Words of what you need (a server, an action, an object), matched against "
                                   "the names and descriptions of the tools not offered yet.")


class ToolSearch(Tool):
    name: ClassVar[str] = "tool_search"
    description: ClassVar[str] = (
        "Find tools that are not offered directly: there are more tools (MCP servers') than this model takes at "
        "once. The best matches for your words (up to 5) become callable from your next step on. Use it when "
        "you need a capability none of your tools has.")
    Args: ClassVar[type[ToolArgs]] = SearchArgs
    examples: ClassVar[tuple[dict[str, Any], ...]] = ({"query": "github issues"},)

    def __init__(self, shelf: ToolShelf) -> None:
        self.shelf = shelf

    def available(self, workspace: Workspace) -> bool:
        return self.shelf.active

    def key_argument(self, args: dict[str, Any]) -> str:
        return str(args.get("query", ""))

    async def run(self, args: Any, ctx: ToolContext) -> str:
        found = self.shelf.search(args.query)
        if not found:
            names = ", ".join(t.name for t in self.shelf.waiting)
            return f"No tool matches {args.query!r}. The tools not offered directly: {names}"
        lines = [f"- {t.name}: {' '.join(t.description.split())[:DESCRIBED]}" for t in found]
        return "Callable from your next step on:\n" + "\n".join(lines)
