"""The files coder-tui reads as configuration, permissions, hooks, profiles, commands, skills,
agents or instructions: the agent may not change them unasked.

A write to one of them (an edit tool, an edit an editor applies, a plan step's) asks in every mode,
allow mode and allow rules included, and the approval names what the file is (`ApprovalRequest.
protected`); inside the sandbox they are read-only (agent/tools/sandbox.py). What a changed file
may do is decided separately: a change that widens what the agent may do applies only once the
user confirms it (agent/workspace_input/grants.py).

Names are matched at any depth (a subfolder opened as a workspace reads its own), without regard
to case or trailing dots and spaces (other file systems read `.Coder-Tui.toml ` as the same file).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

# a file of this name, in any folder
FILES = {
    ".coder-tui.toml": "coder-tui's workspace config (settings, permission rules, hooks, MCP servers)",
    "agents.md": "instructions the agent reads (AGENTS.md)",
    "claude.md": "instructions the agent reads (CLAUDE.md)",
    ".env": "keys and settings (.env)",
}
# anything under a folder of this name, in any folder
FOLDERS = {
    ".coder-tui": "coder-tui's profiles, commands and rules (.coder-tui/)",
    ".claude": "Claude Code's settings, hooks, commands, skills and agents (.claude/)",
    ".agents": "skills (.agents/)",
}
USER = "your own coder-tui configuration"


def _plain(part: str) -> str:
    return part.rstrip(". ").casefold()


def what(path: str) -> str | None:
    """What the workspace file `path` (relative, `/`-separated) is to coder-tui; None: an ordinary file."""
    parts = [_plain(p) for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return None
    for part in parts[:-1]:
        if part in FOLDERS:
            return FOLDERS[part]
    return FILES.get(parts[-1]) or FOLDERS.get(parts[-1])


def user_folders() -> list[Path]:
    """The user's own folders of configuration (outside any workspace, unless one holds them)."""
    from agent import paths

    return [paths.config_dir(), Path.home() / ".claude"]


def what_at(root: Path | None, path: str, extra: Iterable[str] = ()) -> str | None:
    """`what(path)`, and also: a file that resolves (through links) into one of the user's folders of
    configuration or onto one of them, or that is one of `extra` (real paths: the files AGENTS.md
    imports, a profile's prompt file)."""
    found = what(path)
    if found is not None or root is None:
        return found
    real = os.path.realpath(os.path.join(root, path))
    if real in set(extra):
        return "instructions the agent reads (a file AGENTS.md or a profile names)"
    real_root = os.path.realpath(root)
    inside = os.path.relpath(real, real_root)
    if not inside.startswith(".."):
        found = what(inside.replace(os.sep, "/"))
        if found is not None:
            return found
    for folder in user_folders():
        mine = os.path.realpath(folder)
        if real == mine or real.startswith(mine + os.sep):
            return USER
    return None


def root_names() -> list[tuple[str, bool]]:
    """(name, is a folder) of what, in the workspace's root folder, the sandbox keeps from being made."""
    return [(".coder-tui.toml", False), ("AGENTS.md", False), ("CLAUDE.md", False), (".env", False),
            (".coder-tui", True), (".claude", True), (".agents", True)]
