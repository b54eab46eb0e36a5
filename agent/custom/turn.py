"""A custom command's turn: its prompt, and the model and tools its front matter chose for it.

`allowed-tools` narrows the tools offered for that turn (approvals still ask as the mode says); it
never lets a tool run without asking. Claude Code's names (`Bash(git add:*)`, `Read`, `Edit`, …)
are taken as the tools of ours that do the same; our own names, kinds and globs as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Bash": ("bash_exec", "shell_*"), "Read": ("read_file", "get_line_range", "list_dir"), "LS": ("list_dir",),
    "Glob": ("list_dir", "search_code"), "Grep": ("search_code",), "Write": ("write_file",),
    "Edit": ("patch_file", "multi_edit", "replace_lines", "insert_at_line", "delete_lines"),
    "MultiEdit": ("multi_edit",), "WebFetch": ("web_fetch",), "TodoWrite": ("todo_write", "todo_read"),
    "Skill": ("load_skill",),
}
ALWAYS = ("load_skill",)


def selectors(allowed: Iterable[str]) -> list[str]:
    """Tool selectors (names, kinds, globs) for a command's `allowed-tools`; empty: no narrowing."""
    found: list[str] = []
    for item in allowed:
        base = item.split("(", 1)[0].strip()
        found.extend(CLAUDE_TOOLS.get(base, (base,)))
    return [*found, *ALWAYS] if found else []
