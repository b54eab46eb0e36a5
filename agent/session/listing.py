"""One recorded session as the lists show it (`coder-tui sessions`, /sessions, /resume, ACP's
session list, the attach picker): its id, when it started, its folder, and its title: the words
the user typed first, without attached files' bodies or a hook's added context; a fork is titled
"fork of ID: ..." and listed by when it was forked (agent/session/fork.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.images import text_of
from agent.session.notes import is_note
from agent.session.record import SessionSummary, parse_record

HOOK_CONTEXT = "\n\n[hook context] "  # what user_prompt_submit hooks add to a prompt (agent/permissions/check.py)


def summary_of(path: Path) -> SessionSummary | None:
    meta: dict[str, Any] = {}
    prompt: str | None = None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                kind, payload = parse_record(line)
                if kind == "meta" and isinstance(payload, dict):
                    meta.update(payload)
                elif (prompt := _typed(kind, payload)) is not None:
                    break
        created = float(meta.get("created", path.stat().st_mtime))
    except (OSError, TypeError, ValueError):
        return None
    title = f"fork of {meta['forked_from']}: {prompt}" if meta.get("forked_from") and prompt is not None else prompt
    if meta.get("parent_id") and meta.get("task") and prompt is not None:  # a subagent: its agent and task
        title = f"{meta.get('agent', 'agent')}: {meta['task']}"
    return SessionSummary(
        id=str(meta.get("session_id", path.stem)), created=created, workspace=str(meta.get("workspace", "?")),
        first_prompt=title or "", path=path, root=meta.get("root") if isinstance(meta.get("root"), str) else None,
        conversation=prompt is not None,
        parent=str(meta["parent_id"]) if meta.get("parent_id") else None,
    )


def _typed(kind: str | None, payload: Any) -> str | None:
    """The user's own words from the first run's `run_started` (or, in a file without one, its first
    message): the session's title, without attached files' bodies or a hook's added context."""
    from agent.attachments import typed_part

    if kind == "event" and isinstance(payload, dict) and payload.get("type") == "run_started":
        return typed_part(str(payload.get("prompt") or ""))[0]
    if kind == "message" and isinstance(payload, dict) and payload.get("role") == "user" and not is_note(payload):
        text = typed_part(text_of(payload.get("content", "")))[0]
        return text.split(HOOK_CONTEXT, 1)[0]
    return None
