"""A language server's WorkspaceEdit (a rename's answer) as the whole-file changes edit tools make.

Only text edits inside the workspace are taken: an edit that would create, rename or delete files,
or touch a file outside the workspace (a library's stub), is refused with what it wanted.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from agent.diffing import FileChange
from agent.lsp.report import python_index
from agent.tools.base import ToolError
from agent.workspaces.base import Workspace


def _path(workspace: Workspace, uri: str) -> str:
    absolute, root = unquote(urlparse(uri).path), str(workspace.root or "").rstrip("/")
    if not root or not absolute.startswith(root + "/"):
        raise ToolError(f"the rename would change {absolute}, outside the workspace; nothing was changed")
    return workspace.normalize(absolute[len(root) + 1:])


def _edits_by_file(edit: Any) -> dict[str, list[Any]]:
    by_uri: dict[str, list[Any]] = {}
    for uri, edits in (edit.changes or {}).items():
        by_uri.setdefault(uri, []).extend(edits)
    for change in edit.document_changes or []:
        document = getattr(change, "text_document", None)
        if document is None:
            kind = getattr(change, "kind", "a file operation")
            raise ToolError(f"the rename would also {kind} a file, which lsp_rename does not do; nothing was changed")
        by_uri.setdefault(document.uri, []).extend(change.edits)
    return by_uri


def _offset(lines: list[str], starts: list[int], position: Any) -> int:
    if position.line >= len(lines):
        return starts[-1] + len(lines[-1])
    return starts[position.line] + python_index(lines[position.line], position.character)


def apply_text_edits(text: str, edits: list[Any]) -> str:
    """`text` with LSP text edits applied (their ranges refer to the text before any of them)."""
    lines = text.split("\n")
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    spans = sorted(((_offset(lines, starts, e.range.start), _offset(lines, starts, e.range.end), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def file_changes(workspace: Workspace, edit: Any, reason: str) -> list[FileChange]:
    if edit is None:
        return []
    changes = []
    for uri, edits in _edits_by_file(edit).items():
        path = _path(workspace, uri)
        old = await workspace.load_for_edit(path)
        if old is None:
            raise ToolError(f"the rename would change {path}, which does not exist; nothing was changed")
        new = apply_text_edits(old, edits)
        if new != old:
            changes.append(FileChange(path, old, new, reason))
    return changes
