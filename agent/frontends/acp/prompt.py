"""A prompt's content blocks as the text the model reads, and a recorded session as updates.

Embedded resources and `file://` resource links are attached the way the app attaches `@path`
mentions (an `<attached-files>` section after what the user typed), so a session recorded here
reads the same when the app resumes it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import (start_tool_call, text_block, tool_content, update_agent_message_text, update_agent_thought_text,
                 update_plan, update_tool_call, update_user_message_text)
from acp.schema import (BlobResourceContents, EmbeddedResourceContentBlock, ImageContentBlock, ResourceContentBlock,
                        SessionInfo, TextContentBlock, ToolCallStatus)

from agent import attachments
from agent.attachments import file_block, note_block, with_files
from agent.images import Image, ImageError, from_base64, text_of
from agent.events import Event, FileChanged, PlanStepInfo, TodoItem, ToolCallEvent, ToolResultEvent
from agent.frontends.acp.events import OUTPUT_SHOWN, plan_entries
from agent.frontends.acp.tools import tool_kind, tool_locations, tool_title
from agent.llm.reasoning import shown_text
from agent.session.notes import is_note
from agent.session.shapes import recorded_events
from agent.textsafe import line as shown_line
from agent.workspaces.base import Workspace, WorkspaceError



async def prompt_text(blocks: list[Any], workspace: Workspace) -> str:
    """What the user typed, with every resource's text attached after it."""
    typed: list[str] = []
    files: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            typed.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            files.append(_embedded(block, workspace))
        elif isinstance(block, ResourceContentBlock):
            typed.append(f"@{_shown_path(block.uri, workspace)}")
            files.append(await _linked(block, workspace))
        elif isinstance(block, ImageContentBlock):
            continue  # sent as an image (prompt_images)
        else:
            typed.append(f"[a {getattr(block, 'type', 'content')} block was left out: coder-tui reads text only]")
    return with_files("\n".join(typed), files)


def prompt_images(blocks: list[Any]) -> list[Image]:
    """The prompt's image blocks, checked (ImageError: which one, and why)."""
    images = []
    for number, block in enumerate((b for b in blocks if isinstance(b, ImageContentBlock)), 1):
        image = from_base64(block.data, f"image {number} ({block.mime_type})")
        if image.mime != block.mime_type:
            raise ImageError(f"image {number} is {image.format} data but says it is {block.mime_type}")
        images.append(image)
    return images


def _shown_path(uri: str, workspace: Workspace) -> str:
    """A workspace-relative path for a file:// URI inside the workspace, else the URI."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", "") or workspace.root is None:
        return uri
    path = Path(unquote(parsed.path))
    try:
        return path.relative_to(workspace.root).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:
        return uri


def _embedded(block: EmbeddedResourceContentBlock, workspace: Workspace) -> str:
    resource = block.resource
    path = _shown_path(resource.uri, workspace)
    if isinstance(resource, BlobResourceContents):
        return note_block(path, "binary content, not attached")
    return file_block(path, resource.text)


async def _linked(block: ResourceContentBlock, workspace: Workspace) -> str:
    path = _shown_path(block.uri, workspace)
    if path == block.uri:
        return note_block(path, "not attached: only files inside the workspace are read")
    try:
        return file_block(path, await workspace.read_text(path))
    except WorkspaceError as exc:
        return note_block(path, f"not attached: {exc}")


def typed_part(prompt: str) -> str:
    return attachments.typed_part(prompt)[0]


def history_updates(data: Any, root: Path | None, approval_kind: Callable[[str], str | None]
                    ) -> tuple[list[Any], int]:
    """A recorded session as the updates that show it (its messages, tool calls and plan), and how many
    of its recorded events were skipped as unreadable."""
    events, skipped = recorded_events(data.events)
    failed = {e.call_id for e in events if isinstance(e, ToolResultEvent) and not e.ok}
    diffs = _recorded_diffs(events)
    updates: list[Any] = []
    for message in data.history or data.messages:
        role, content = message.get("role"), message.get("content")
        if is_note(message):  # coder-tui's note for the model, not a prompt
            continue
        if role == "user" and isinstance(content, (str, list)):
            updates.append(update_user_message_text(typed_part(text_of(content))))
        elif role == "assistant":
            if thought := shown_text(message):
                updates.append(update_agent_thought_text(thought))
            if isinstance(content, str) and content.strip():
                updates.append(update_agent_message_text(content))
            updates += [_call_start(call, root, approval_kind) for call in message.get("tool_calls") or []]
        elif role == "tool" and message.get("tool_call_id"):
            call_id = message["tool_call_id"]
            shown = [f"```diff\n{diff}```" for diff in diffs.get(call_id, [])] or [str(content or "")[:OUTPUT_SHOWN]]
            status: ToolCallStatus = "failed" if call_id in failed else "completed"
            updates.append(update_tool_call(call_id, status=status,
                                            content=[tool_content(text_block(s)) for s in shown if s] or None))
    plan = _recorded_plan(data)
    if plan:
        updates.append(update_plan(plan))
    return updates, skipped


def _recorded_diffs(events: list[Event]) -> dict[str, list[str]]:
    """call id -> the unified diffs of the files it changed (the record keeps no whole texts)."""
    diffs: dict[str, list[str]] = {}
    current: str | None = None
    for event in events:
        if isinstance(event, ToolCallEvent):
            current = event.call_id
        elif isinstance(event, FileChanged) and current is not None:
            diffs.setdefault(current, []).append(event.diff)
        elif isinstance(event, ToolResultEvent):
            current = None
    return diffs


def _call_start(call: dict[str, Any], root: Path | None, approval_kind: Callable[[str], str | None]) -> Any:
    function = call.get("function") or {}
    name = str(function.get("name", "tool"))
    try:
        args = json.loads(function.get("arguments") or "{}")
    except ValueError:
        args = {}
    args = args if isinstance(args, dict) else {}
    return start_tool_call(str(call.get("id", "")), tool_title(name, args), kind=tool_kind(name, approval_kind(name)),
                           status="pending", locations=tool_locations(root, name, args) or None, raw_input=args)


def _recorded_plan(data: Any) -> list[Any]:
    todos = [TodoItem.model_validate(t) for t in data.todos]
    steps: list[PlanStepInfo] = []
    saved = data.state.get("plan") if isinstance(data.state, dict) else None
    if isinstance(saved, dict):
        for step in saved.get("steps", []):
            try:
                steps.append(PlanStepInfo.model_validate({k: step[k] for k in ("id", "title", "status") if k in step}))
            except (ValueError, KeyError):
                continue
    return plan_entries(steps, todos)


PAGE = 50  # sessions per session/list answer


def recorded_sessions(cwd: str | None, start: int, live: dict[str, dict[str, Any]] | None = None
                      ) -> tuple[list[SessionInfo], bool]:
    """One page of the recorded sessions on a folder (`cwd`'s only, when given), and whether more follow.
    Those live in the session host (`live`: id -> its row in the host's list) come first, said in `_meta`."""
    from agent.session.record import SessionStore

    live = live or {}
    wanted = os.path.realpath(cwd) if cwd else None
    found = [s for s in SessionStore().list() if s.root and (wanted is None or os.path.realpath(s.root) == wanted)]
    found.sort(key=lambda s: s.id not in live)  # stable: newest first within each
    page = found[start:start + PAGE]
    return [SessionInfo(session_id=s.id, cwd=str(s.root), title=_title(s.first_prompt),
                        updated_at=datetime.fromtimestamp(s.path.stat().st_mtime, timezone.utc).isoformat(),
                        field_meta=_live_meta(live[s.id]) if s.id in live else None)
            for s in page], start + PAGE < len(found)


def _live_meta(row: dict[str, Any]) -> dict[str, Any]:
    """How session/list says a session is live in the session host (session/load joins it there)."""
    return {"coder-tui": {"live": True, "running": bool(row.get("running")),
                          "attached": [shown_line(str(name)) for name in row.get("clients", [])]}}


def _title(prompt: str) -> str | None:
    first = shown_line(typed_part(prompt).strip().split("\n", 1)[0])
    return (first if len(first) <= 80 else first[:79] + "…") or None
