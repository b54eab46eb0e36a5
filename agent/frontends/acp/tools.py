"""How a tool call looks to an ACP client: its kind (the icon), a title, and the places it touches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.schema import ToolCallLocation, ToolKind

from agent.textsafe import line as shown_line

# Tools whose ACP kind is not what their approval kind says (read / edit / exec / network).
KINDS: dict[str, ToolKind] = {
    "search_code": "search", "get_codebase_map": "search",
    "todo_write": "think", "todo_read": "think",
    "get_issue": "fetch", "list_issues": "fetch",
    "add_issue_comment": "other", "create_pull_request": "other",
    "schedule_task": "other", "list_tasks": "other", "cancel_task": "other",
}
BY_APPROVAL: dict[str, ToolKind] = {"read": "read", "edit": "edit", "exec": "execute", "network": "fetch"}
LINE_ARGS = ("start_line", "line")


def tool_kind(tool: str, approval_kind: str | None) -> ToolKind:
    if tool in KINDS:
        return KINDS[tool]
    if tool.startswith("mcp__"):
        return "other"
    return BY_APPROVAL.get(approval_kind or "", "other")


def _short(text: str, limit: int = 80) -> str:
    first, *more = text.strip().split("\n")  # not splitlines(): a CR or U+2028 would hide the rest
    first = shown_line(first) + (" …" if more else "")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def tool_title(tool: str, args: dict[str, Any]) -> str:
    """A short line saying what the call does, as an editor shows it in the thread (control and
    bidi characters of the command or path shown, not sent: agent/textsafe.py)."""
    return shown_line(_title(tool, args))


def _title(tool: str, args: dict[str, Any]) -> str:
    path = args.get("file_path") or args.get("path")
    if tool in ("read_file", "get_line_range"):
        return f"Read {path}" + _range(args)
    if tool == "list_dir":
        return f"List {path or 'the workspace'}"
    if tool in ("write_file", "patch_file", "replace_lines", "insert_at_line", "delete_lines"):
        return f"Edit {path}"
    if tool == "multi_edit":
        files = [e.get("file_path", "?") for e in args.get("edits", []) if isinstance(e, dict)]
        return "Edit " + ", ".join(files)
    if tool in ("bash_exec", "shell_exec"):
        return f"Run `{_short(str(args.get('command', '')))}`"
    if tool == "search_code":
        return f"Search `{_short(str(args.get('pattern', '')), 60)}`" + (f" in {path}" if path else "")
    if tool == "web_fetch":
        return f"Fetch {args.get('url', '')}"
    if tool == "todo_write":
        return "Update the plan"
    if tool == "git":
        return "git " + " ".join(str(a) for a in args.get("args", []))
    return tool.replace("_", " ").capitalize() if not tool.startswith("mcp__") else tool


def _range(args: dict[str, Any]) -> str:
    start, end = args.get("start_line"), args.get("end_line")
    if start and end:
        return f" (lines {start}-{end})"
    return f" (from line {start})" if start else ""


def tool_locations(root: Path | None, tool: str, args: dict[str, Any]) -> list[ToolCallLocation]:
    """Absolute paths (ACP's rule) of the files the call reads or changes, with a line when known."""
    if root is None:
        return []
    paths: list[str] = []
    if tool == "multi_edit":
        paths = [str(e["file_path"]) for e in args.get("edits", []) if isinstance(e, dict) and e.get("file_path")]
    elif isinstance(args.get("file_path"), str):
        paths = [args["file_path"]]
    elif tool in ("list_dir", "search_code") and isinstance(args.get("path"), str):
        paths = [args["path"]]
    line = next((args[k] for k in LINE_ARGS if isinstance(args.get(k), int)), None)
    return [ToolCallLocation(path=absolute(root, p), line=line if len(paths) == 1 else None) for p in paths]


def absolute(root: Path, path: str) -> str:
    return str(root / path) if not Path(path).is_absolute() else path
