"""How a finished tool call reads on its one line in the conversation (live, archived or replayed).

A command shows its exit code and the last lines of its output under the row (a non-zero exit
is a failure to the user even though the tool itself worked); a denied or stopped call says so
instead of quoting the message the model got; an error note is cut at a word, not mid-word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHELL_TOOLS = {"bash_exec", "shell_exec"}  # their output starts with "exit code: N" (or a timeout)
EXIT_RE = re.compile(r"^exit code: (-?\d+)$", re.MULTILINE)
TIMEOUT_RE = re.compile(r"^timed out after (\d+ s)", re.MULTILINE)
SECTION_MARKS = {"--- stdout ---", "--- stderr ---", "(no output)"}
PREVIEW_LINES = 4
NOTE_WIDTH = 80
EXPAND_HINT = "Enter or a click shows it all"


DECISIONS = {"allow_once": "allowed", "allow_all": "allowed for the session", "deny": "denied",
             "stop": "stopped"}


def decision_notes(decision: str, feedback: str | None = None, rejected_hunks: dict[str, list[int]] | None = None,
                   edited_files: list[str] | None = None) -> tuple[str, str]:
    """The user's answer to an approval: (the note while the call runs, the note on its finished row).

    A denied or stopped call is shown as such on its row, not by the message the model got."""
    changes = []
    if rejected_hunks:
        count = sum(len(v) for v in rejected_hunks.values())
        changes.append(f"{count} hunk{'s' if count != 1 else ''} rejected")
    if edited_files:
        changes.append("edited by you")
    note = ", ".join([DECISIONS[decision], *changes]) + (f": {feedback}" if feedback else "")
    return note, shorten(note) if decision in ("deny", "stop") else ", ".join(changes)


@dataclass
class Shown:
    ok: bool  # the icon: ✓ or ✗
    note: str = ""  # after the key argument, e.g. "exit 1" or "denied: use logging"
    preview: str = ""  # a command's last lines of output, under its row while it is folded


def shorten(text: str, width: int = NOTE_WIDTH) -> str:
    """The first line of `text` in at most `width` cells, cut at a word boundary with an ellipsis."""
    stripped = text.strip()
    first = stripped.splitlines()[0].strip() if stripped else ""
    if len(first) <= width:
        return first
    cut = first[: width - 1]
    space = cut.rfind(" ")
    if space >= width // 2:  # a very long word (a path, a URL) is cut where it must be
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


def shown_result(tool: str, ok: bool, body: str, decision: str = "") -> Shown:
    """`decision`: the user's answer when it explains the outcome (denied, stopped, hunks rejected)."""
    if not ok:
        return Shown(False, decision or shorten(body))
    if tool in SHELL_TOOLS:
        return _command(body, decision)
    return Shown(True, decision)


def _command(body: str, decision: str) -> Shown:
    head = body[:2000]  # the status line comes first (after a sandbox note, at most)
    if (timeout := TIMEOUT_RE.search(head)) is not None:
        ok, note = False, f"timed out after {timeout.group(1)}"
    elif (code := EXIT_RE.search(head)) is not None:
        ok, note = code.group(1) == "0", f"exit {code.group(1)}"
    else:
        return Shown(True, decision)
    if decision:
        note = f"{decision} · {note}"
    return Shown(ok, note, preview(body))


def preview(body: str) -> str:
    """The last lines of a command's output, and how many more there are (and how to see them)."""
    lines = [line for line in body.splitlines()
             if line.strip() not in SECTION_MARKS and not EXIT_RE.match(line) and not TIMEOUT_RE.match(line)
             and not line.startswith("note: ")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return ""
    shown = lines[-PREVIEW_LINES:]
    hidden = len(lines) - len(shown)
    text = "\n".join(line if len(line) <= 200 else line[:199] + "…" for line in shown)
    if hidden:
        text = f"… {hidden} more line{'s' if hidden != 1 else ''} above · {EXPAND_HINT}\n{text}"
    return text
