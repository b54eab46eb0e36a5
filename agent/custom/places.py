"""Where a session in a local folder finds the workspace's own commands and skills: the folder,
then each folder above it up to its repository's root, as the AGENTS.md chain reaches
(agent/custom/instructions.py). Started in `repo/src`, `/review-pr` from `repo/.coder-tui/commands/`
is found; the nearest folder's file wins a name.

A folder's files load when the folder the session opened is trusted, or when that folder itself
is (trusting the repository's root trusts its commands wherever in it coder-tui starts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agent.custom.instructions import chain, repository_root


@dataclass(frozen=True)
class Place:
    folder: Path  # where `.coder-tui/commands/` or `.agents/skills/` would be
    shown: str  # that folder from the opened one: "" for itself, "../" for its parent, ...
    trusted: bool


def places(root: Path, trusted: bool) -> list[Place]:
    """The opened folder `root` and those above it in its repository, nearest first."""
    repo = repository_root(root)
    found = []
    for rel in reversed(chain(repo, root)):
        folder = repo / rel if rel else repo
        here = folder == root.resolve()
        shown = "" if here else os.path.relpath(folder, root.resolve()) + "/"
        found.append(Place(folder, shown, trusted or (not here and _trusted(folder))))
    return found


def _trusted(folder: Path) -> bool:
    from agent.workspace_input.trust import decision

    return decision(folder).trusted is True
