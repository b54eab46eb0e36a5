"""The one call that gathers what a workspace supplies for a session, by the rules of `policy`.

`workspace_input(root, config)` gives the profiles (built in, the user's, the workspace's, screened),
the MCP servers the session may start, and `ignored`: everything left out, from the config file
too, so that a session says it once (`notices()`). `instructions(workspace)` reads AGENTS.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.workspace_input.policy import INSTRUCTIONS, Ignored, notices

INSTRUCTIONS_CAP = 20_000  # characters of a remote AGENTS.md in the system prompt (local: agent/custom/instructions.py)


@dataclass
class WorkspaceInput:
    profiles: Any  # agent.profiles.ProfileSet
    mcp_servers: dict[str, Any]
    ignored: list[Ignored] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # other things said about the input, as lines
    commands: Any = None  # agent.custom.commands.CommandSet
    skills: Any = None  # agent.custom.skills.SkillSet
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
    commands, skills = custom_files(root, config.workspace_trusted)
    rules = Permissions.from_config(config)  # a rule that cannot be used is said once, with why
    return WorkspaceInput(profiles, servers, [*config.ignored, *profiles.ignored],
                          [*server_notes, *commands.notes, *skills.notes, *rules.problems], commands, skills,
                          permissions=rules)


def custom_files(root: Path | None, trusted: bool) -> tuple[Any, Any]:
    """The custom commands and the skills of the workspace (trusted only) and of the user."""
    from agent.custom import commands, skills

    return (commands.load_commands(root, trusted, commands.user_folders()),
            skills.load_skills(root, trusted, skills.user_folders()))


async def instructions(workspace: Any) -> tuple[str, list[str]]:
    """AGENTS.md's text for the system prompt (cut at INSTRUCTIONS_CAP) and what to say about it."""
    loaded = await load_instructions(workspace)
    return loaded.text, loaded.notes


async def load_instructions(workspace: Any) -> Any:
    """The instructions (agent/custom/instructions.py `Loaded`): for a local folder the user's global
    AGENTS.md and those from the repository's root down to it, with their imports; else the root's."""
    from agent.custom.instructions import Loaded, gather

    root = getattr(workspace, "root", None)
    if workspace.kind == "local" and root is not None:
        import asyncio

        from agent import paths

        return await asyncio.to_thread(gather, Path(root), paths.config_dir())
    text, notes = await _remote_instructions(workspace)
    return Loaded(text, [(INSTRUCTIONS.where, len(text))] if text else [], notes)


async def _remote_instructions(workspace: Any) -> tuple[str, list[str]]:
    """A GitHub repository's or a room's AGENTS.md: the text comes through the workspace, no local file."""
    from agent.workspaces.base import WorkspaceError

    name = INSTRUCTIONS.where
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


async def _listed(workspace: Any, folder: str, name: str) -> bool:
    """Whether the room's shared `folder` lists a file `name`: the host's own listing, one request a
    folder (a host may answer a stat for a file it then cannot read: a room without AGENTS.md was
    warned about one it never had)."""
    from agent.workspaces.base import WorkspaceError

    try:
        return any(entry.name == name and not entry.is_dir for entry in await workspace.list_dir(folder))
    except WorkspaceError:
        return False  # a folder it cannot list: the tools say why when they use it


async def _read_remote(workspace: Any, name: str) -> str | None:
    """AGENTS.md through the workspace; in a room, one per shared folder (its root holds only folders)."""
    if workspace.kind != "room":
        return await workspace.read_text(name) if await workspace.exists(name) else None
    found = [f"{folder}/{name}" for folder in workspace.client.status.folders if await _listed(workspace, folder, name)]
    texts = [await workspace.read_text(path) for path in found]
    if len(found) == 1:
        return texts[0]
    return "\n".join(f"### {path}\n{text}" for path, text in zip(found, texts)) or None

