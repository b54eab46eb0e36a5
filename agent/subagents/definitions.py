"""Which agents a parent may hand a task to: the profiles (built in, the user's, the workspace's)
and Markdown agent files, `agents/NAME.md` in the user's config folder and `.coder-tui/agents/NAME.md`
in the workspace, with a front matter of name, description, tools, model (and mode) and the
agent's instructions as the body:

    ---
    name: tester
    description: Runs the tests and reports what fails
    tools: read, exec
    ---
    Run the test suite; report each failure with its file and line.

A workspace's files come with the repository: they are read only when the folder is trusted (the
rule of every other file a repository ships); otherwise they are left out with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent import paths
from agent.custom.frontmatter import FrontMatterError, parse
from agent.events import Mode
from agent.profiles import ProfileSet
from agent.workspace_input import files
from agent.workspace_input.policy import NOT_TRUSTED

WORKSPACE_FOLDER = ".coder-tui/agents"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
FILE_CAP = 64 * 1024
MODES: tuple[Mode, ...] = ("plan", "ask", "allow")


@dataclass(frozen=True)
class AgentDef:
    name: str
    description: str = ""
    profile: str = "coder"  # the profile it runs on (its agent type, limits; its tools unless `tools`)
    tools: tuple[str, ...] | None = None  # tool selectors (names, globs, kinds); None: the profile's
    model: str | None = None
    mode: Mode | None = None
    prompt: str = ""  # instructions added to the child's task
    source: str = "built in"


@dataclass
class AgentSet:
    agents: dict[str, AgentDef] = field(default_factory=dict)
    profiles: set[str] = field(default_factory=set)  # the profile names an agent file may run on
    notes: list[str] = field(default_factory=list)  # files left out, and why (said as warnings)

    def get(self, name: str) -> AgentDef | None:
        return self.agents.get(name)

    def listing(self) -> str:
        return "; ".join(f"{a.name} ({a.description})" if a.description else a.name
                         for a in self.agents.values())


def load_agents(profiles: ProfileSet, root: Path | None, trusted: bool) -> AgentSet:
    """Every agent: the profiles, then the user's agent files, then the workspace's (trusted only);
    a later one replaces an earlier one of the same name."""
    found = AgentSet(profiles=set(profiles.profiles))
    for profile in profiles.profiles.values():
        if profile.agent == "stream":
            continue  # an agent answers with no tools: nothing a parent could not do itself
        found.agents[profile.name] = AgentDef(profile.name, profile.description, profile.name,
                                              source=profile.source)
    folder = paths.config_dir() / "agents"
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        _add(found, str(path), lambda path=path: _read_user(path))
    if root is not None:
        _workspace(found, root, trusted)
    return found


def _workspace(found: AgentSet, root: Path, trusted: bool) -> None:
    try:
        names = files.listing(root, WORKSPACE_FOLDER, ".md")
    except files.OutsideWorkspace as exc:
        found.notes.append(f"ignored the agents in {WORKSPACE_FOLDER}: {exc}")
        return
    if names and not trusted:
        found.notes.append(f"ignored the agent definitions in {WORKSPACE_FOLDER} ({len(names)} file(s)): "
                           f"{NOT_TRUSTED}")
        return
    for rel in names:
        _add(found, rel, lambda rel=rel: files.read_inside(root, rel, cap=FILE_CAP))


def _read_user(path: Path) -> str:
    if path.stat().st_size > FILE_CAP:
        raise FrontMatterError(f"it is {path.stat().st_size} bytes; at most {FILE_CAP} are read")
    return path.read_text("utf-8")


def _add(found: AgentSet, shown: str, read: Any) -> None:
    try:
        text = read()
        if text is None:
            return
        agent = read_agent(text, Path(shown).stem, shown, found.profiles)
    except (FrontMatterError, files.OutsideWorkspace) as exc:
        found.notes.append(f"ignored agent file {shown}: {exc}")
        return
    except (OSError, UnicodeDecodeError) as exc:
        found.notes.append(f"ignored agent file {shown}: cannot be read ({type(exc).__name__})")
        return
    found.agents[agent.name] = agent


def read_agent(text: str, default_name: str, source: str, profiles: set[str]) -> AgentDef:
    """One agent file; FrontMatterError says what is wrong with it."""
    meta, body = parse(text, strings=("name", "description", "model", "mode", "profile"))
    name = str(meta.get("name") or default_name)
    if not NAME.match(name):
        raise FrontMatterError(f"{name!r} is not an agent name (letters, digits, `-`, `_`, `.`)")
    mode = meta.get("mode")
    if mode is not None and mode not in MODES:
        raise FrontMatterError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    profile = str(meta.get("profile") or "coder")
    if profile not in profiles:
        raise FrontMatterError(f"profile {profile!r} is unknown")
    return AgentDef(name, str(meta.get("description") or ""), profile, _tools(meta.get("tools")),
                    str(meta["model"]) if meta.get("model") else None, mode, body.strip(), source)


def _tools(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    tools = tuple(str(item).strip() for item in items if str(item).strip())
    return tools
