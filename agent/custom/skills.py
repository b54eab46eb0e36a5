"""Agent Skills (the open SKILL.md format, agentskills.io): a folder holding `SKILL.md`, whose front
matter names the skill and says when to use it, and whose body (with the folder's other files) the
model loads only when a task needs it (`load_skill`, agent/custom/skilltool.py).

Found in the workspace's `.agents/skills/` and `.claude/skills/` (only when the folder is trusted)
and the user config folder's `skills/`. Checked by the specification: `name` (1-64 lowercase
letters, digits and single hyphens, not at either end, the same as the folder's name) and
`description` (1-1024 characters) are required; `license`, `compatibility` (≤ 500 characters),
`metadata` (text to text) and `allowed-tools` are optional; other fields (Claude Code adds some) are
kept as they are. A skill that fails is not offered, and the session says why once. The reference
library `skills-ref` was not taken: it calls itself a demonstration, not for production use, and
brings strictyaml and click for the few checks written here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.custom.frontmatter import FrontMatterError, parse, text_list

WORKSPACE_FOLDERS = (".agents/skills", ".claude/skills")
SKILL_FILE = "SKILL.md"
FILE_CAP = 256 * 1024
MAX_SKILLS = 200
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class SkillFile(BaseModel):
    """The fields of a SKILL.md (the schema agent/workspace_input/policy.py's SKILLS rules)."""

    name: str = ""
    description: str = ""
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = {}
    allowed_tools: list[str] = []
    body: str = ""


@dataclass
class Skill:
    name: str  # the folder's name
    folder: Path
    source: str  # "workspace" or "user"
    file: SkillFile | None = None  # None when it could not be read
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.file is not None and not self.problems

    @property
    def description(self) -> str:
        return self.file.description if self.file is not None else ""


@dataclass
class SkillSet:
    skills: dict[str, Skill] = field(default_factory=dict)  # the valid ones, by name
    all: list[Skill] = field(default_factory=list)  # every skill folder found, valid or not
    notes: list[str] = field(default_factory=list)

    def prompt_section(self) -> str:
        """Names and descriptions for the system prompt (the bodies stay out until loaded)."""
        if not self.skills:
            return ""
        rows = "\n".join(f"- {s.name}: {' '.join(s.description.split())}" for s in self.skills.values())
        return ("\n## Skills\nSkills are instructions for particular tasks. When a task matches a skill's "
                "description, call load_skill with its name before you start, and follow it; load_skill "
                "with `path` reads a file the skill refers to.\n" + rows + "\n")


def check(values: dict[str, Any], folder_name: str) -> list[str]:
    """What is wrong with a SKILL.md's front matter, by the specification (empty: nothing)."""
    problems: list[str] = []
    name, description = values.get("name"), values.get("description")
    if not isinstance(name, str) or not name.strip():
        problems.append("`name` is missing")
    elif len(name) > 64:
        problems.append(f"`name` has {len(name)} characters; at most 64")
    elif not NAME.match(name):
        problems.append(f"`name` {name!r} must be lowercase letters, digits and single hyphens, "
                        "not starting or ending with one")
    elif name != folder_name:
        problems.append(f"`name` {name!r} is not the folder's name {folder_name!r}")
    if not isinstance(description, str) or not description.strip():
        problems.append("`description` is missing")
    elif len(description) > 1024:
        problems.append(f"`description` has {len(description)} characters; at most 1024")
    compatibility = values.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or len(compatibility) > 500):
        problems.append("`compatibility` must be text of at most 500 characters")
    metadata = values.get("metadata")
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(isinstance(v, (str, int, float, bool)) for v in metadata.values())):
        problems.append("`metadata` must map keys to text")
    if values.get("license") is not None and not isinstance(values["license"], str):
        problems.append("`license` must be text")
    return problems


def read_skill(text: str, folder_name: str) -> tuple[SkillFile | None, list[str]]:
    try:
        values, body = parse(text, ("name", "description", "license", "compatibility"))
    except FrontMatterError as exc:
        return None, [str(exc)]
    if not values:
        return None, ["SKILL.md has no front matter (`---` with name and description)"]
    problems = check(values, folder_name)
    if problems:
        return None, problems
    metadata = {str(k): str(v) for k, v in (values.get("metadata") or {}).items()}
    return SkillFile(name=values["name"], description=values["description"].strip(), license=values.get("license"),
                     compatibility=values.get("compatibility"), metadata=metadata,
                     allowed_tools=text_list(values.get("allowed-tools")), body=body), []


def load_skills(root: Path | None, trusted: bool, user_folders: list[Path]) -> SkillSet:
    """The skills of the workspace at root and the folders above it in its repository (trusted
    only, agent/custom/places.py) and of the user's folders."""
    from agent.custom.places import places
    from agent.workspace_input import files

    found = SkillSet()
    for place in places(root, trusted) if root is not None else []:
        present = [folder for folder in WORKSPACE_FOLDERS if _folders(place.folder / folder)]
        if present and not place.trusted:
            from agent.workspace_input.policy import NOT_TRUSTED

            shown = ", ".join(place.shown + folder for folder in present)
            found.notes.append(f"ignored the skills in {shown}: {NOT_TRUSTED}")
        for folder in present if place.trusted else []:
            for name in _folders(place.folder / folder):
                rel = f"{folder}/{name}"
                _add(found, name, place.folder / rel, "workspace", place.shown + rel,
                     lambda base=place.folder, rel=rel: files.read_inside(base, f"{rel}/{SKILL_FILE}", cap=FILE_CAP))
    for base in user_folders:
        for name in _folders(base):
            _add(found, name, base / name, "user", str(base / name),
                 lambda base=base, name=name: files.read_inside(base, f"{name}/{SKILL_FILE}", cap=FILE_CAP))
    return found


def _folders(base: Path) -> list[str]:
    try:
        return sorted(p.name for p in base.iterdir() if not p.name.startswith(".") and p.is_dir())[:MAX_SKILLS]
    except OSError:
        return []


def _add(found: SkillSet, name: str, folder: Path, source: str, shown: str, read: Any) -> None:
    from agent.textsafe import line
    from agent.workspace_input.files import OutsideWorkspace

    skill = Skill(name, folder, source)
    found.all.append(skill)
    try:
        text = read()
    except OutsideWorkspace as exc:
        skill.problems.append(str(exc))
    else:
        if text is None:
            skill.problems.append(f"the folder has no {SKILL_FILE}")
        else:
            skill.file, skill.problems = read_skill(text, name)
    if skill.valid and name in found.skills:
        skill.problems.append(f"a skill named {name} was found first in {found.skills[name].folder}")
    if skill.valid:
        found.skills[name] = skill
    else:
        found.notes.append(f"ignored skill {line(shown)}: {line('; '.join(skill.problems))}")


def user_folders() -> list[Path]:
    from agent import paths

    return [paths.config_dir() / "skills"]
