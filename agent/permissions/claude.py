"""Claude Code's `.claude/settings.json` (and `settings.local.json`) in a workspace, read as ours.

Only its `permissions` lists and its `hooks` are used; they pass the same trust rule as
`.coder-tui.toml` (agent/workspace_input/policy.py `CLAUDE_SETTINGS`): until the folder is
trusted, `deny` and `ask` rules apply and `allow` rules and hooks do not. Claude's tool names
(`Bash(npm test:*)`) are understood by the rule parser; a hook group's `matcher` (`Edit|Write`) is
turned into our tool names; events we do not have are reported, not silently dropped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.permissions.rules import CLAUDE_NAMES
from agent.workspace_input import files

FILES = (".claude/settings.json", ".claude/settings.local.json")
EVENTS = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "UserPromptSubmit": "user_prompt_submit",
          "Stop": "stop", "Notification": "notification"}
OURS_TO_CLAUDE = {"bash_exec": "Bash", "read_file": "Read", "write_file": "Write", "patch_file": "Edit",
                  "multi_edit": "MultiEdit", "replace_lines": "Edit", "insert_at_line": "Edit",
                  "delete_lines": "Edit", "web_fetch": "WebFetch", "list_dir": "LS", "search_code": "Grep"}


class ClaudeHook(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str = "command"
    command: str | None = None
    timeout: float | None = None


class ClaudeHookGroup(BaseModel):
    model_config = ConfigDict(extra="ignore")

    matcher: str = ""
    hooks: list[ClaudeHook] = Field(default_factory=list)


class ClaudePermissions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)


class ClaudeSettings(BaseModel):
    """The part of Claude Code's settings file coder-tui reads (its other keys are Claude's own)."""

    model_config = ConfigDict(extra="ignore")

    permissions: ClaudePermissions | None = None
    hooks: dict[str, list[ClaudeHookGroup]] | None = None


def read(root: Path) -> list[tuple[str, dict[str, Any], list[str]]]:
    """Per settings file found: its name, what it sets in our form, and what is not used, with why."""
    found: list[tuple[str, dict[str, Any], list[str]]] = []
    for name in FILES:
        try:
            text = files.read_inside(root, name, cap=1 << 20)
        except files.OutsideWorkspace as exc:
            found.append((name, {}, [f"the whole file: {exc}"]))
            continue
        if text is not None:
            found.append((name, *convert(text)))
    return found


def convert(text: str) -> tuple[dict[str, Any], list[str]]:
    """A settings file's text as our `permissions` and `hooks` tables, and the problems found."""
    try:
        settings = ClaudeSettings.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError, TypeError) as exc:
        first = str(exc).splitlines()[0]
        return {}, [f"the whole file: it is not a settings file coder-tui can read ({first})"]
    values: dict[str, Any] = {}
    problems: list[str] = []
    if settings.permissions is not None:
        values["permissions"] = settings.permissions.model_dump(exclude_defaults=True)
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, groups in (settings.hooks or {}).items():
        ours = EVENTS.get(event)
        if ours is None:
            problems.append(f"hooks.{event}: coder-tui has no such event (it has {', '.join(EVENTS)})")
            continue
        for group in groups:
            for hook in group.hooks:
                if hook.type != "command" or not hook.command:
                    problems.append(f"hooks.{event}: only hooks of type \"command\" run here")
                    continue
                spec: dict[str, Any] = {"command": hook.command, **({"timeout": hook.timeout} if hook.timeout else {})}
                if (match := matcher(group.matcher)) is not None:
                    spec["match"] = match
                hooks.setdefault(ours, []).append(spec)
    if hooks:
        values["hooks"] = hooks
    return values, problems


def matcher(text: str) -> str | None:
    """Claude's matcher (a tool name, `A|B`, `*` or empty, or a regex such as `mcp__.*`) as our pattern."""
    if text.strip() in ("", "*", ".*"):
        return None
    names: list[str] = []
    for part in text.split("|"):
        part = part.strip()
        names.extend(CLAUDE_NAMES.get(part, (part.replace(".*", "*"),)))
    return "|".join(dict.fromkeys(names))
