"""An approval's panel rebuilt from its event, for a session whose tools run elsewhere (the session
host): each file's change rebuilt from the workspace and the event's diff, so the hunks the panel
numbers are the session's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent import events as ev

if TYPE_CHECKING:
    from agent.approval import ApprovalRequest
    from agent.diffing import FileChange


def key_argument(args: dict[str, Any]) -> str:
    """The argument a tool row shows when the tools are the host's (agent/tools/base.py's choice)."""
    from agent.tools.base import Tool

    return Tool.key_argument(cast("Tool", None), args)  # it reads only the arguments


def approval_request(event: ev.ApprovalRequired, root: Path | None) -> ApprovalRequest:
    """The panel's request from the event: each file's change rebuilt from the workspace and its
    diff (the hunks the panel numbers are the session's), or none when it cannot be rebuilt."""
    from agent.approval import ApprovalRequest

    details = {name: getattr(event, name) for name in ev.ApprovalDetails.model_fields}
    changes = [rebuilt(root, preview) for preview in event.files] if root is not None else []
    return ApprovalRequest(**details, changes=[c for c in changes if c is not None])


def rebuilt(root: Path, preview: ev.FilePreview) -> FileChange | None:
    """The change a preview shows, exactly (its diff rebuilt from it is the preview's), or None."""
    from agent.diffing import FileChange

    old: str | None = None
    if not preview.created:
        try:
            old = (root / preview.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    new = None if preview.deleted else _applied(old or "", preview.diff, preview.path)
    if new is None and not preview.deleted:
        return None
    change = FileChange(preview.path, old, new)
    return change if change.unified_diff() == preview.diff else None


def _applied(old: str, diff: str, path: str) -> str | None:
    from tui.widgets.diffmodel import parse_unified

    files = parse_unified(diff, path)
    if len(files) != 1:
        return None
    old_lines, out, at = old.splitlines(keepends=True), [], 0
    for hunk in files[0].hunks:
        out += old_lines[at:hunk.old_start]
        out += [d.text + ("" if d.no_newline else "\n") for d in hunk.lines if d.tag != "removed"]
        at = hunk.old_start + hunk.old_len
    return "".join(out + old_lines[at:])
