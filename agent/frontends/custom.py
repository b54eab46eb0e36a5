"""`coder-tui skills`: the Agent Skills this folder's sessions would offer, and the broken ones."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agent.config import ConfigError, load_config
from agent.textsafe import line


def list_skills(options: Any) -> int:
    from agent.custom.skills import load_skills, user_folders

    root = Path(options.workspace).resolve()
    try:
        config = load_config(root)
    except ConfigError as exc:
        print(f"coder-tui skills: error: {exc}", file=sys.stderr)
        return 2
    found = load_skills(root, config.workspace_trusted, user_folders())
    if not found.all:
        print(f"no skills: add a folder with a SKILL.md to .agents/skills/ (trusted folders) or "
              f"{user_folders()[0]}")
    for skill in found.all:
        state = "ok" if skill.name in found.skills and found.skills[skill.name] is skill else "not offered"
        print(line(f"{skill.name}  ({skill.source}: {skill.folder})  {state}"))
        if skill.description:  # a workspace's skill: its text, shown with controls made visible
            print(line(f"    {' '.join(skill.description.split())}"))
        for problem in skill.problems:
            print(line(f"    problem: {problem}"))
    for note in found.notes:
        if not note.startswith("ignored skill "):  # those are the problems listed above
            print(f"note: {note}", file=sys.stderr)
    return 0
