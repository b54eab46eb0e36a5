"""What a front end tells the user on opening a recorded session, and the notes the model reads
about what happened outside its turns (a restore of the files, a stopped answer)."""

from __future__ import annotations

from typing import Any


def resume_notes(session: Any) -> list[str]:
    """Warnings about a resumed session: lines of its file set aside, a lock taken over."""
    notes = []
    data = session.restored
    if data is not None and data.damaged_lines:
        notes.append(f"{data.damaged_lines} damaged line(s) of session {session.session_id}'s file were set "
                     "aside (not of the expected shape); the rest of the session is resumed")
    lock = getattr(session.writer, "lock", None)
    if lock is not None and lock.took_over is not None:
        notes.append(f"session {session.session_id} was left locked by {lock.took_over.describe()}, which is "
                     "no longer running; this process took it over")
    return notes


NOTE_PREFIX = "[coder-tui note, not from the user] "
STOPPED = "[Stopped by the user before this answer was finished.]"


def is_note(message: dict[str, Any]) -> bool:
    """A message coder-tui added for the model (replays show it as a notice, not as a prompt)."""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(NOTE_PREFIX)


def restore_note(restored: Any, saved: Any, include_untouched: bool) -> dict[str, Any]:
    """What the model reads after the user restored a checkpoint: its history no longer matches the files."""
    scope = ("every file" if include_untouched else "the files you changed (files the user changed by hand were "
             "kept)")
    text = (f"{NOTE_PREFIX}The user restored checkpoint {restored.id} ({restored.label}): {scope} went back to how "
            f"they were at that point. Changes this conversation describes after it (edits, new files, command "
            f"effects) are undone; read files again before relying on them. (The state before the restore is "
            f"checkpoint {saved.id}.)")
    return {"role": "user", "content": text}


def stopped_answer(messages: list[dict[str, Any]], partial: str) -> dict[str, Any] | None:
    """The answer a stopped turn leaves in the history: what was streamed of it, and that it was cut
    short (None when the conversation already ends with an answer)."""
    if messages and messages[-1].get("role") == "assistant" and not messages[-1].get("tool_calls"):
        return None
    text = f"{partial.strip()}\n\n{STOPPED}" if partial.strip() else STOPPED
    return {"role": "assistant", "content": text}


def disk_full(failure: BaseException | None, where: Any, any_error: bool = False) -> None:
    """Stop the run (before the change it was about to make) when coder-tui's data has no room left."""
    import errno

    from agent.loop import FatalLoopError

    if failure is None:
        return
    full = getattr(failure, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(failure)
    if not full and not any_error:
        return
    why = "the disk is full" if full else f"it cannot be written ({failure})"
    raise FatalLoopError(f"stopped before changing any file: coder-tui's data folder ({where}) has no room, "
                         f"{why}. Free some space and run it again (a recorded session continues with --resume)") from None
