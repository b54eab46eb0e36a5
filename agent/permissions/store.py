"""Adding and removing rules where they last: the user's config.toml or the workspace's
`.coder-tui.toml`, and in the running session at once. `/permissions` (the app) and the approval's
"allow from now on" use these; Claude Code's settings file is read, never written.

    /permissions                                   the rules in force, each with its file
    /permissions allow 'bash_exec(npm test:*)'     add (also: ask, deny; --workspace: the workspace file)
    /permissions remove 'bash_exec(npm test:*)'    remove it from the file(s) that hold it
"""

from __future__ import annotations

import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

from agent import paths
from agent.config import WORKSPACE_FILE, read_settings, save_user_settings
from agent.permissions.engine import ACTIONS, Permissions
from agent.permissions.rules import RuleError, parse
from agent.workspace_input import grants

USAGE = ("/permissions lists the rules; /permissions allow|ask|deny RULE [--workspace] adds one "
         "(quote it: 'bash_exec(npm test:*)'); /permissions remove RULE removes it")


def add(rules: Permissions | None, action: str, text: str, workspace: Path | None = None) -> Path:
    """Save `action text` in the user's config (or the workspace file) and apply it now.
    RuleError for a rule that cannot be used (nothing is written)."""
    if action not in ACTIONS:
        raise RuleError(f"{action!r} is not allow, ask or deny")
    parse(text)
    if workspace is None:
        current = _user_rules()
        if text not in current.get(action, []):
            current[action] = [*current.get(action, []), text]
        where = save_user_settings({"permissions": current})
    else:
        where = _edit_workspace(workspace, lambda table: table.setdefault(action, []).append(text)
                                if text not in table.get(action, []) else None)
        if action == "allow":  # your own rule, added outside the agent's turn: the folder's trust covers it
            from agent.workspace_input import trust

            trust.confirm(workspace, [grants.digest(WORKSPACE_FILE, "permissions.allow", text)])
    if rules is not None:
        rules.add(action, text, str(where))  # type: ignore[arg-type]
    return where


def remove(rules: Permissions | None, text: str, workspace: Path | None = None) -> list[str]:
    """Take `text` out of the user's config and the workspace file and the session; where it was."""
    found: list[str] = []
    current = _user_rules()
    if any(text in current.get(a, []) for a in ACTIONS):
        kept = {a: [r for r in current.get(a, []) if r != text] for a in ACTIONS}
        save_user_settings({"permissions": {a: rules for a, rules in kept.items() if rules} or None})
        found.append(str(paths.user_config_file()))
    if workspace is not None and _workspace_has(workspace, text):
        found.append(str(_edit_workspace(workspace, lambda table: [
            table.__setitem__(a, [r for r in table.get(a, []) if r != text]) for a in ACTIONS])))
    if rules is not None:
        for entry in rules.remove(text):
            if entry.source not in found:
                found.append(f"{entry.source} (this session only: edit that file to remove it for good)")
    return found


def command(rules: Permissions | None, arg: str, workspace: Path | None) -> tuple[str, str]:
    """`/permissions ARG` for any front end: (what to say, kind: info | success | warning | error)."""
    try:
        words = shlex.split(arg)
    except ValueError as exc:
        return f"/permissions: {exc}; {USAGE}", "error"
    if not words:
        lines = rules.listing() if rules is not None else []
        problems = rules.problems if rules is not None else []
        text = "\n".join(lines) if lines else "No permission rules: the mode decides what asks first."
        return text + "".join(f"\n{p}" for p in problems) + f"\n{USAGE}", "info"
    verb, rest = words[0].lower(), words[1:]
    in_workspace = "--workspace" in rest
    rest = [w for w in rest if w != "--workspace"]
    if len(rest) != 1 or verb not in (*ACTIONS, "remove"):
        return USAGE, "warning"
    if in_workspace and workspace is None:
        return "/permissions: this session has no local workspace folder to write to", "error"
    if verb == "remove":
        try:
            found = remove(rules, rest[0], workspace)
        except (ValueError, OSError) as exc:
            return f"/permissions: {rest[0]!r} is not removed: {exc}", "error"
        return (f"Removed {rest[0]} from {', '.join(found)}", "success") if found else (
            f"No rule {rest[0]!r}; /permissions lists them", "warning")
    try:
        where = add(rules, verb, rest[0], workspace if in_workspace else None)
    except (ValueError, OSError) as exc:  # RuleError, a workspace file that is not TOML, a disk error
        return f"/permissions: {rest[0]!r} is not saved: {exc}", "error"
    return f"Saved: {verb} {rest[0]} in {where}; it applies from now on", "success"


def _user_rules() -> dict[str, list[str]]:
    """The user config's [permissions] lists that have rules."""
    table = read_settings(paths.user_config_file()).given().get("permissions", {})
    return {action: list(rules) for action, rules in table.items() if rules}


def _workspace_has(workspace: Path, text: str) -> bool:
    table = _read_workspace(workspace).get("permissions", {})
    return any(text in table.get(a, []) for a in ACTIONS)


def _read_workspace(workspace: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((workspace / WORKSPACE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def _edit_workspace(workspace: Path, change: Any) -> Path:
    """Apply `change` to the workspace file's [permissions] table and write the file back (whole)."""
    import tomli_w

    path = workspace / WORKSPACE_FILE
    if os.path.islink(path):
        raise OSError(f"{path} is a link; edit the file it points to yourself")
    data = _read_workspace(workspace)
    change(data.setdefault("permissions", {}))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    os.replace(tmp, path)
    return path
