"""`@path` mentions: the mentioned files' content goes with the message."""

from __future__ import annotations

from typing import Any

FILE_CAP = 60_000  # characters of one mentioned file sent to the model
MARKER = "\n\n<attached-files>"


async def attach_mentions(workspace: Any, text: str, mentions: list[str]) -> tuple[str, list[str]]:
    """The prompt with every mentioned file appended, and a line for each file that could not be read."""
    from agent.workspaces.base import WorkspaceError

    blocks: list[str] = []
    problems: list[str] = []
    for path in mentions:
        try:
            content = await workspace.read_text(path)
        except WorkspaceError as exc:
            problems.append(f"@{path} was not attached: {exc}")
            continue
        if len(content) > FILE_CAP:
            content = content[:FILE_CAP] + f"\n[… cut at {FILE_CAP:,} characters; read_file shows the rest]"
        blocks.append(f'<file path="{path}">\n{content}\n</file>')
    if not blocks:
        return text, problems
    return text + MARKER + "\n" + "\n".join(blocks) + "\n</attached-files>", problems


def typed_part(prompt: str) -> tuple[str, list[str]]:
    """What the user typed, and the attached paths, from a recorded prompt."""
    head, marker, tail = prompt.partition(MARKER)
    if not marker:
        return prompt, []
    paths = [line[len('<file path="'):-2] for line in tail.splitlines() if line.startswith('<file path="')]
    return head, paths
