"""Rewind: go back to an earlier prompt of the session, for the conversation, the files, or both.

The points are the user's prompts the model still sees (newest first). Each knows the first
checkpoint taken after it: the files as they were before the agent changed anything from that
prompt on (none: the agent changed nothing since, there is nothing to put back). Rewinding the
conversation drops that prompt and everything after it from what the model sees, records the cut
(a `rewind` line: resuming continues from it) and tells the model what was undone; the files go
back through `AgentSession.undo` (files changed by hand are kept unless the user says otherwise).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from agent.attachments import typed_part
from agent.compaction import SUMMARY_HEADER
from agent.images import count, text_of
from agent.session.notes import NOTE_PREFIX, is_note

What = Literal["conversation", "files", "both"]


@dataclass(frozen=True)
class Point:
    index: int  # of the prompt in session.messages
    text: str  # what the user typed
    images: int
    checkpoint: str | None  # the first checkpoint after the prompt (None: no file changed by the agent since)


def points(session: Any) -> list[Point]:
    """The prompts the session can go back to, newest first."""
    session.writer.sync()
    checkpoints = _recorded_checkpoints(session.writer.path) if session.writer.recorded else []
    found: list[Point] = []
    pointer = len(checkpoints)  # live prompts pair with recorded ones from the newest back
    for index in range(len(session.messages) - 1, 0, -1):
        message = session.messages[index]
        text = text_of(message.get("content"))
        if message.get("role") != "user" or is_note(message) or text.startswith(SUMMARY_HEADER):
            continue  # a note, or a compaction's summary of the turns before it
        match = next((i for i in range(pointer - 1, -1, -1) if checkpoints[i][0] == text), None)
        checkpoint = None
        if match is not None:
            pointer, checkpoint = match, checkpoints[match][1]
        found.append(Point(index, typed_part(text)[0], count(message.get("content")), checkpoint))
    return found


def _recorded_checkpoints(path: Any) -> list[tuple[str, str | None]]:
    """Each recorded prompt (its text) in file order, with the first checkpoint taken after it."""
    prompts: list[tuple[str, str | None]] = []
    waiting: list[int] = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return []
    for raw in lines:
        try:
            record = json.loads(raw)
            kind, data = record["kind"], record["data"]
        except (ValueError, KeyError, TypeError):
            continue
        if kind == "message" and isinstance(data, dict) and data.get("role") == "user" and not is_note(data):
            waiting.append(len(prompts))
            prompts.append((text_of(data.get("content")), None))
        elif kind == "event" and isinstance(data, dict) and data.get("type") == "checkpoint" \
                and not data.get("restored") and isinstance(data.get("id"), str):
            for i in waiting:
                prompts[i] = (prompts[i][0], data["id"])
            waiting = []
    return prompts


def rewind_note(point: Point, removed: int, files: bool) -> dict[str, Any]:
    """What the model reads after the user went back to before `point`'s prompt."""
    quoted = point.text if len(point.text) <= 200 else point.text[:199] + "…"
    text = (f"{NOTE_PREFIX}The user rewound the conversation to before their message {json.dumps(quoted)}: that "
            f"message and the {removed - 1} message(s) after it (your answers, tool calls and their results) were "
            "removed, and did not happen as far as this conversation goes.")
    if files:
        text += " The files were put back as they were before that message (the next note says which checkpoint)."
    else:
        text += (" The files were NOT put back: they are as those removed turns left them; read them again "
                 "before relying on them.")
    return {"role": "user", "content": text}


def rewind_conversation(session: Any, point: Point, files: bool) -> int:
    """Drop `point`'s prompt and what followed from the conversation, recorded and told to the model;
    returns how many messages were removed."""
    cut = session.messages[point.index]
    removed = len(session.messages) - point.index
    del session.messages[point.index:]
    note = rewind_note(point, removed, files)
    session.messages.append(note)
    session.writer.rewind(session.messages[1:], cut)
    return removed


async def rewind(session: Any, point: Point, what: What, include_untouched: bool = False) -> tuple[int, Any]:
    """Go back to before `point`: (messages removed, the restored checkpoint or None)."""
    removed = rewind_conversation(session, point, what == "both") if what != "files" else 0
    restored = None
    if what != "conversation" and point.checkpoint is not None:
        # Reads that were current follow the files back when the conversation goes back too; an
        # undo alone keeps them (the conversation still describes the files as they were).
        current = await session.workspace.current_reads() if what == "both" else []
        restored, _ = await session.undo(point.checkpoint, include_untouched)
        await session.workspace.reread(current)
    return removed, restored
