"""The one call that gathers what a workspace supplies for a session, by the rules of `policy`.

`workspace_input(root, config)` gives the profiles (built in, the user's, the workspace's, screened),
the MCP servers the session may start, and `ignored`: everything left out, from the config file
too, so that a session says it once (`notices()`). `instructions(workspace)` reads AGENTS.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.workspace_input import files
from agent.workspace_input.policy import INSTRUCTIONS, Ignored, notices

INSTRUCTIONS_CAP = 20_000  # characters of AGENTS.md in the system prompt
INSTRUCTIONS_READ = 1 << 20  # bytes read at most (a larger file is cut, a device refused)


@dataclass
class WorkspaceInput:
    profiles: Any  # agent.profiles.ProfileSet
    mcp_servers: dict[str, Any]
    ignored: list[Ignored] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # other things said about the input, as lines
    permissions: Any = None  # agent.permissions.engine.Permissions: the rules of every config file

    def notices(self) -> list[str]:
        """One line per item left out (with the config file's), as a `warning` says it."""
        return [*notices(self.ignored), *self.notes]


def workspace_input(root: Path | None, config: Any) -> WorkspaceInput:
    """What the session may use of the workspace at root (None: a workspace without a local folder)."""
    from agent.mcp import allowed_servers
    from agent.permissions.engine import Permissions
    from agent.profiles import load_profiles

    profiles = load_profiles(root, trusted=config.workspace_trusted, base_mode=config.mode)
    servers, server_notes = allowed_servers(config)
    rules = Permissions.from_config(config)  # a rule that cannot be used is said once, with why
    return WorkspaceInput(profiles, servers, [*config.ignored, *profiles.ignored], [*server_notes, *rules.problems],
                          permissions=rules)


async def instructions(workspace: Any) -> tuple[str, list[str]]:
    """AGENTS.md's text for the system prompt (cut at INSTRUCTIONS_CAP) and what to say about it."""
    name = INSTRUCTIONS.where
    root = getattr(workspace, "root", None)
    if workspace.kind == "local" and root is not None:
        import asyncio

        try:
            text = await asyncio.to_thread(_read_cut, Path(root), name)
        except files.OutsideWorkspace as exc:
            return "", [f"ignored {name}: {exc}"]
    else:  # a GitHub repository or a room: the text comes through the workspace, no local file
        from agent.workspaces.base import WorkspaceError

        try:
            text = await _read_remote(workspace, name)
        except WorkspaceError as exc:
            return "", [f"ignored {name}: {exc}"]
    if not text:
        return "", []
    if len(text) <= INSTRUCTIONS_CAP:
        return text, []
    cut = f"{name} cut at {INSTRUCTIONS_CAP:,} characters (it has {len(text):,})"
    return text[:INSTRUCTIONS_CAP] + f"\n[{cut}]", [cut]


async def _read_remote(workspace: Any, name: str) -> str | None:
    """AGENTS.md through the workspace; in a room, one per shared folder (its root holds only folders)."""
    if workspace.kind != "room":
        return await workspace.read_text(name) if await workspace.exists(name) else None
    found = [f"{folder}/{name}" for folder in workspace.client.status.folders]
    found = [path for path in found if await workspace.exists(path)]
    texts = [await workspace.read_text(path) for path in found]
    if len(found) == 1:
        return texts[0]
    return "\n".join(f"### {path}\n{text}" for path, text in zip(found, texts)) or None


def _read_cut(root: Path, name: str) -> str | None:
    return files.read_inside(root, name, cap=INSTRUCTIONS_READ, cut=True)
