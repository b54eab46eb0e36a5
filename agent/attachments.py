"""Files attached to a prompt: the `<attached-files>` section after what the user typed.

The app attaches `@path` mentions this way and the ACP front end attaches resources this way, so a
session recorded by one reads the same when another resumes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the app imports this before its first frame; workspaces load later
    from agent.workspaces.base import Workspace

FILE_CAP = 60_000  # characters of one attached file sent to the model
MARKER = "\n\n<attached-files>"
NOTE_MARK = "\n\n[intent router] "  # starts the router's note on a steered prompt (agent/planning/intents.py)


def file_block(path: str, text: str) -> str:
    """One attached file, cut at FILE_CAP characters (the model can read the rest)."""
    if len(text) > FILE_CAP:
        text = text[:FILE_CAP] + f"\n[… cut at {FILE_CAP:,} characters; read_file shows the rest]"
    return f'<file path="{path}">\n{text}\n</file>'


def note_block(path: str, note: str) -> str:
    """A file named but not attached, with the reason in place of its content."""
    return f'<file path="{path}">\n[{note}]\n</file>'


def with_files(text: str, blocks: list[str]) -> str:
    """The prompt followed by its attached files (the prompt alone when there are none)."""
    if not blocks:
        return text
    return text + MARKER + "\n" + "\n".join(blocks) + "\n</attached-files>"


async def attach_mentions(workspace: Workspace, text: str, mentions: list[str]) -> tuple[str, list[str]]:
    """The prompt with every mentioned file appended, and a line for each file that could not be read."""
    from agent.workspaces.base import WorkspaceError

    blocks: list[str] = []
    problems: list[str] = []
    for path in mentions:
        try:
            blocks.append(file_block(path, await workspace.read_text(path)))
        except WorkspaceError as exc:
            problems.append(f"@{path} was not attached: {exc}")
    return with_files(text, blocks), problems


def typed_part(prompt: str) -> tuple[str, list[str]]:
    """What the user typed, and the attached paths, from a recorded prompt (without the intent
    router's note for the model, agent/planning/intents.py)."""
    prompt = prompt.split(NOTE_MARK, 1)[0]
    head, marker, tail = prompt.partition(MARKER)
    if not marker:
        return prompt, []
    paths = [line[len('<file path="'):-2] for line in tail.splitlines() if line.startswith('<file path="')]
    return head, paths
