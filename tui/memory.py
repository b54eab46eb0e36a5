"""`/memory`: which instruction files the session loaded (with their sizes), and one opened in
the user's editor ($VISUAL or $EDITOR) while the app steps aside (Textual's `suspend`)."""

from __future__ import annotations

import os
import shlex
import subprocess
from typing import TYPE_CHECKING

from agent.textsafe import line
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui.app import CoderApp


def _say(app: CoderApp, text: str, kind: str = "info") -> None:
    app.query_one(Transcript).notice(text, kind)


async def memory_command(app: CoderApp, arg: str) -> None:
    session = app.bridge.session
    if session is None:
        _say(app, "the agent is not ready yet; try again in a moment", "warning")
        return
    from agent.workspace_input.load import load_instructions

    loaded = await load_instructions(session.workspace)  # as the next request will read them
    if not loaded.files:
        _say(app, "No instruction files loaded: add AGENTS.md to the project (or CLAUDE.md), or a global "
                  "AGENTS.md to the user config folder.")
        return
    if not arg:
        rows = "\n".join(f"  {i}. {line(name)}  ({size:,} characters)" for i, (name, size) in
                         enumerate(loaded.files, start=1))
        cut = "".join(f"\n{note}" for note in loaded.notes)
        _say(app, f"Instruction files, in the order the model reads them (the last has the last word):\n{rows}"
                  f"{cut}\n/memory N opens one in $EDITOR.")
        return
    if not arg.isdigit() or not 1 <= int(arg) <= len(loaded.paths):
        _say(app, f"/memory N opens file N (1 to {len(loaded.paths)}); /memory lists them", "warning")
        return
    await open_in_editor(app, str(loaded.paths[int(arg) - 1]))


async def open_in_editor(app: CoderApp, path: str) -> None:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        _say(app, f"set $EDITOR (or $VISUAL) to open files; the file is {path}", "warning")
        return
    try:
        command = [*shlex.split(editor), path]
    except ValueError:
        _say(app, f"$EDITOR cannot be read as a command: {line(editor)}", "error")
        return
    try:
        with app.suspend():  # as Textual documents it: the editor owns the terminal until it exits
            code = subprocess.call(command)
    except OSError as exc:
        _say(app, f"could not start {line(command[0])}: {exc.strerror}", "error")
        return
    except Exception as exc:  # noqa: BLE001 - Textual's SuspendNotSupported (a test or a web terminal)
        _say(app, f"the app cannot step aside for an editor here ({type(exc).__name__}); the file is {path}",
             "warning")
        return
    _say(app, f"Edited {path}" + (f" (the editor exited with {code})" if code else "") +
              "; the next request reads it.", "success" if not code else "warning")
