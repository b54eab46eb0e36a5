"""The codebase map section of the system prompt, rebuilt for each prompt within a token budget."""

from __future__ import annotations

import json
from typing import Any

from agent.workspaces.base import Workspace, WorkspaceError

FIRST_MAP_MAX_FILES = 5000  # about 3 s of parsing: more waits for an explicit `coder-tui map`


def conversation_texts(messages: list[dict[str, Any]]) -> list[str]:
    """What the user and the agent said and touched, newest first (mentions rank in that order)."""
    texts: list[str] = []
    for message in reversed(messages):
        if message.get("role") in ("user", "assistant") and isinstance(message.get("content"), str):
            texts.append(message["content"])
        for call in message.get("tool_calls") or []:
            texts.append(json.dumps(call.get("function", {}).get("arguments", "")))
    return texts


async def map_section(workspace: Workspace, messages: list[dict[str, Any]], budget_tokens: int) -> str:
    """The ranked map (files mentioned in the conversation first); empty when it cannot be had."""
    if budget_tokens <= 0:
        return ""
    from agent.knowledge.source import source_for

    source = source_for(workspace)
    if source.cheap_listing and not await _worth_building(workspace, source.key):
        return ""
    import sqlite3

    from agent.github.errors import GitHubError
    from agent.knowledge.builder import current_view
    from agent.knowledge.store import StoreError
    from agent.knowledge.view import cached_view

    try:
        # In a room every file is a round trip to the host: prompts use the map as last built
        # (by get_codebase_map or /explore) instead of reading the whole room each time.
        view = await current_view(workspace) if source.cheap_listing else cached_view(source.key)
    except (StoreError, WorkspaceError, GitHubError, sqlite3.Error, OSError):
        return ""  # the prompt works without a map; `coder-tui map` reports what is wrong
    if view is None:
        return ""
    return view.section(budget_tokens, view.mentioned_in(conversation_texts(messages)))


async def _worth_building(workspace: Workspace, key: str) -> bool:
    """A first map of a very large folder is left to `coder-tui map` rather than the first prompt;
    an empty folder has nothing to map (its prompt gets no map, and no map file is made for it)."""
    from agent.knowledge.store import knowledge_dir

    if workspace.root is None or (knowledge_dir(key) / "map.sqlite3").exists():
        return True
    try:
        return 0 < len(await workspace.list_files("")) <= FIRST_MAP_MAX_FILES
    except WorkspaceError:
        return False
