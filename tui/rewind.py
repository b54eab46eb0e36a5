"""/rewind (and Esc Esc on an empty prompt) and /fork in the app.

/rewind lists the conversation's earlier prompts, newest first; the one picked is where the
conversation, the files (from the checkpoints), or both go back to (agent/session/rewind.py). The
prompt's text comes back into the input to edit and send again. /fork copies the session to a new
id and continues the copy (agent/session/fork.py); the original stays as it was.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from rich.text import Text

from agent.textsafe import line

if TYPE_CHECKING:
    from tui.app import CoderApp

DOUBLE_ESCAPE = 0.8  # seconds between the two presses of Esc Esc
WHAT = [("both", "Conversation and files: back to how both were before this prompt"),
        ("conversation", "Conversation only: the files stay as they are now"),
        ("files", "Files only: the conversation goes on as it is")]


def double_escape(app: CoderApp) -> bool:
    """Esc on an empty, idle prompt: the second press within DOUBLE_ESCAPE seconds opens /rewind (True)."""
    prompt = app.query_one("#prompt")
    if app.bridge.running or getattr(prompt, "text", "x").strip() or not prompt.has_focus:
        app.last_escape = 0.0
        return False
    now, last = time.monotonic(), getattr(app, "last_escape", 0.0)
    app.last_escape = 0.0 if now - last <= DOUBLE_ESCAPE else now
    if now - last > DOUBLE_ESCAPE:
        return False
    from tui.prompting import run_command

    run_command(app, "/rewind")
    return True


async def rewind_command(app: CoderApp, arg: str) -> None:
    from agent.session.rewind import points, rewind
    from tui.commands import _ask_untouched, _idle, _say, switch_session
    from tui.screens.pick import PickScreen

    session = _idle(app, "/rewind")
    if session is None:
        return
    found = await asyncio.to_thread(points, session)
    if not found:
        _say(app, "Nothing to rewind: this conversation has no earlier prompt yet.")
        return
    labels = [(str(i), _label(p.text, p.images, p.checkpoint)) for i, p in enumerate(found)]
    picked = await app.push_screen_wait(PickScreen("Rewind to before which prompt?", labels))
    if picked is None:
        return
    point = found[int(picked)]
    choices = WHAT if point.checkpoint is not None else WHAT[1:2]
    what = await app.push_screen_wait(PickScreen("Restore what?" if point.checkpoint else
                                                 "Restore what? (the agent changed no file since this prompt)", choices))
    if what is None:
        return
    include = await _ask_untouched(app, session, point.checkpoint) if what != "conversation" else False
    removed, restored = await rewind(session, point, what, include)  # type: ignore[arg-type]
    if what != "files":
        await switch_session(app, session.session_id)  # the conversation shown again, from the record
        app.query_one("#prompt").load_text(point.text)  # type: ignore[attr-defined]
    said = [f"Rewound to before “{line(point.text[:60])}”"]
    if removed:
        said.append(f"{removed} message(s) removed from the conversation")
    if restored is not None:
        said.append(f"files back as at checkpoint {restored.id} (files you changed by hand were kept"
                    f"{' too' if not include else ', except those you chose to restore'})")
    _say(app, "; ".join(said) + ". The model is told.", "success")
    app.refresh_pane()


def _label(text: str, images: int, checkpoint: str | None) -> Text:
    shown = " ".join(text.split()) or "(empty prompt)"
    label = Text(line(shown[:80]))
    if images:
        label.append(f"  [{images} image(s)]", style="dim")
    label.append("  files: " + (f"checkpoint {checkpoint[:7]}" if checkpoint else "unchanged since"), style="dim")
    return label


async def fork_command(app: CoderApp, arg: str) -> None:
    from agent.session.fork import fork
    from agent.session.record import SessionError, SessionStore
    from tui.commands import _idle, _say, switch_session

    session = _idle(app, "/fork")
    if session is None:
        return
    if not session.writer.recorded:
        _say(app, "Nothing to fork yet: send a prompt first.")
        return
    original = session.session_id
    await asyncio.to_thread(session.writer.sync)
    try:
        new_id = await asyncio.to_thread(fork, SessionStore(), original)
    except SessionError as exc:
        _say(app, f"/fork: {exc}", "error")
        return
    await switch_session(app, new_id)
    _say(app, f"Forked: this is session {new_id}, a copy; session {original} stays as it was "
              f"(/resume {original} goes back to it).", "success")
