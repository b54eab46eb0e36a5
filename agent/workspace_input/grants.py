"""What trusting a folder grants, item by item, so that a trust covers what the user saw when giving it.

Trust is remembered with the items it covered (`[folder_trust."PATH"] confirmed`, short digests):
each setting of `.coder-tui.toml` and `.claude/settings*.json` that an untrusted folder may not
use (a hook, an allow rule, `sandbox = "off"`, an MCP server, a model or an address: one item
each, with its value), every file under `.coder-tui/`, `.claude/` and `.agents/` (profiles,
commands, skills, agents, the scripts they name) and each key of `.env`. When the folder is loaded and holds
an item the user did not confirm (a hook the agent wrote, a changed profile), the folder counts as
not trusted until the user confirms again (`coder-tui trust DIR`, `--trust`, the app's question),
outside the agent's turn; items that went away (a hook removed) change nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.workspace_input import dotenv, files
from agent.workspace_input.policy import CLAUDE_SETTINGS, CONFIG, Context, InputKind, screen, show

FOLDERS = (".coder-tui", ".claude", ".agents")  # every file under them counts (settings*.json: by setting)
SCREENED = (".claude/settings.json", ".claude/settings.local.json")
MAX_FILES = 2000
FILE_CAP = 256 * 1024
LISTED = ("permissions", "hooks")  # their lists count entry by entry


def digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def items(root: Path, config: Mapping[str, Any], claude: Sequence[tuple[str, Mapping[str, Any]]],
          ctx: Context) -> dict[str, str]:
    """digest -> what it is, for everything trust grants in the folder at root: `config` is its
    `.coder-tui.toml`'s settings, `claude` its Claude Code settings files (name, settings in our form)."""
    found: dict[str, str] = {}
    for name, kind, values in [(".coder-tui.toml", CONFIG, config), *((n, CLAUDE_SETTINGS, v) for n, v in claude)]:
        for key, value in _refused(kind, values, ctx):
            found[digest(name, key, value)] = f"{describe(key, value)} in {name}"
    for name, value in dotenv.keys(root)[0].items():
        found[digest(dotenv.FILE, name, value)] = f"the key {name} in .env"
    for rel in _files(root):
        try:
            text = files.read_inside(root, rel, cap=FILE_CAP, cut=True)
        except files.OutsideWorkspace as exc:
            text = f"refused: {exc}"
        if text is not None:
            found[digest(rel, text)] = f"the file {rel}"
    return found


def describe(key: str, value: Any) -> str:
    """One item as the user confirms it: the command a hook runs, the rule, the server's program."""
    head, _, name = key.partition(".")
    if head == "hooks" and isinstance(value, dict):
        return f"hook {name}: {value.get('command')!r}"
    if head == "permissions":
        return f"{name} rule {value!r}"
    if head == "mcp_servers" and isinstance(value, dict):
        program = value.get("url") or " ".join([str(value.get("command")), *map(str, value.get("args") or [])])
        return f"MCP server {name}: {program!r}"
    if isinstance(value, dict) and head not in ("api_key", "github_token"):
        return f"{key} = {json.dumps(value, sort_keys=True, default=str)}"
    return show(key, value)


def _refused(kind: InputKind, values: Mapping[str, Any], ctx: Context) -> list[tuple[str, Any]]:
    """What an untrusted folder's file may not use: (dotted key, value), lists of rules and hooks per entry."""
    kept, _ = screen(kind, values, "", ctx, trusted=False)
    out: list[tuple[str, Any]] = []
    for key, value in values.items():
        mine = kept.get(key)
        if mine == value:
            continue
        if isinstance(value, dict):
            for sub, entry in value.items():
                have = mine.get(sub) if isinstance(mine, dict) else None
                if key in LISTED and isinstance(entry, list):
                    out += [(f"{key}.{sub}", item) for item in entry if not (isinstance(have, list) and item in have)]
                elif have != entry:
                    out.append((f"{key}.{sub}", entry))
        elif isinstance(value, list) and isinstance(mine, list):
            out += [(key, item) for item in value if item not in mine]
        else:
            out.append((key, value))
    return out


def _files(root: Path) -> list[str]:
    """The workspace files whose every byte trust covers (relative names, sorted, at most MAX_FILES)."""
    found: list[str] = []
    for folder in FOLDERS:
        try:
            files.inside(root, folder)
        except files.OutsideWorkspace:
            if os.path.lexists(root / folder):
                found.append(folder)  # a link out: counted as what it is (read_inside refuses it)
            continue
        for current, dirs, names in os.walk(root / folder):
            dirs.sort()
            for name in sorted(names):
                rel = os.path.relpath(os.path.join(current, name), root).replace(os.sep, "/")
                if rel not in SCREENED and len(found) < MAX_FILES:
                    found.append(rel)
    return found


def unconfirmed(now: Mapping[str, str], confirmed: list[str] | None) -> list[str]:
    """What the folder holds that the user's trust did not cover (described), in order."""
    known = set(confirmed or ())
    return [label for key, label in now.items() if key not in known]
