"""`load_skill`: the model reads a skill's instructions (SKILL.md's body) when a task matches its
description, and with `path` one of the files the skill refers to, inside the skill's folder only
(no absolute paths, no `..`, no links out: agent/workspace_input/files.py)."""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from agent.custom.skills import SKILL_FILE, SkillSet
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError

FILE_CAP = 256 * 1024
LISTED = 50


class LoadSkillArgs(ToolArgs):
    name: str = Field(description="The skill's name, as listed under Skills in the system prompt.")
    path: str = Field(default="", description="A file inside the skill's folder that its instructions refer to "
                                              "(e.g. reference/forms.md); empty for the instructions themselves.")


class LoadSkill(Tool):
    name = "load_skill"
    description = ("Load a skill's instructions (listed under Skills in the system prompt) when the task matches "
                   "its description; with `path`, read one of the files inside the skill's folder.")
    Args = LoadSkillArgs
    kind = "read"

    def __init__(self, skills: SkillSet) -> None:
        self.skills = skills

    def key_argument(self, args: dict[str, object]) -> str:
        return f"{args.get('name', '')}{'/' + str(args['path']) if args.get('path') else ''}"

    async def run(self, args: LoadSkillArgs, ctx: ToolContext) -> str:
        skill = self.skills.skills.get(args.name)
        if skill is None or skill.file is None:
            names = ", ".join(sorted(self.skills.skills)) or "none"
            raise ToolError(f"no skill named {args.name!r}; the skills are: {names}")
        if not args.path.strip() or args.path.strip() in (SKILL_FILE, f"./{SKILL_FILE}"):
            listing = await asyncio.to_thread(_files, str(skill.folder))
            more = f"\n\nFiles in the skill's folder (read them with load_skill and `path`): {', '.join(listing)}" \
                if listing else ""
            return f"# Skill: {skill.name}\n\n{skill.file.body.strip()}{more}"
        from agent.workspace_input import files

        try:
            text = await asyncio.to_thread(files.read_inside, skill.folder, args.path.strip(), FILE_CAP)
        except files.OutsideWorkspace as exc:
            raise ToolError(f"{exc} (only files inside the skill's folder are read)") from None
        if text is None:
            raise ToolError(f"the skill {skill.name} has no file {args.path!r}")
        return text


def _files(folder: str) -> list[str]:
    found: list[str] = []
    for current, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            rel = os.path.relpath(os.path.join(current, name), folder)
            if rel != SKILL_FILE and len(found) < LISTED:
                found.append(rel.replace(os.sep, "/"))
    return found
