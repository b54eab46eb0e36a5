"""Agent profiles: named agents with their own prompt, agent type, tool set, mode, models and limits.

Profiles are TOML files: built in (this package), in the user config folder (`profiles/*.toml`)
and in the workspace (`.coder-tui/profiles/*.toml`); a later folder's profile replaces an earlier
one of the same name. Workspace files come with the repository, so they are untrusted config:
unless the folder is trusted, what a workspace profile says about running commands (exec tools,
`*`) or raising the mode to `allow` is ignored, and `ProfileSet.ignored` says what was.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from agent import paths
from agent.config import first_problem
from agent.events import Mode

DEFAULT_PROFILE = "coder"
WORKSPACE_DIR = ".coder-tui/profiles"
AgentType = Literal["iterative", "stream", "react"]
KINDS = ("read", "edit", "exec", "network", "mcp")
# Selectors that let a profile run programs on the machine (exec tools, or everything).
EXECUTING = {"exec", "*", "bash_exec", "shell_*", "shell_open", "shell_exec"}


class ProfileError(Exception):
    """A profile file is unreadable or invalid, or a profile name is unknown; the message says which."""


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)
    description: str = ""
    system_prompt: str | None = None
    system_prompt_file: str | None = None  # relative to the profile file
    agent: AgentType = "iterative"
    tools: list[str] = Field(default_factory=lambda: list(KINDS))
    mode: Mode | None = None
    model: str | None = None
    small_model: str | None = None
    max_steps: int | None = Field(default=None, ge=1, le=10_000)
    max_cost: float | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, ge=1)
    _source: str = PrivateAttr("built in")

    @field_validator("tools")
    @classmethod
    def _selectors(cls, value: list[str]) -> list[str]:
        for item in value:
            if not item.strip():
                raise ValueError("a tool selector is empty")
        return value

    @property
    def source(self) -> str:
        """Where the profile was read from ("built in", or its file)."""
        return self._source

    def prompt_text(self) -> str:
        return (self.system_prompt or "").strip()


@dataclass
class ProfileSet:
    profiles: dict[str, Profile] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)  # what untrusted workspace profiles asked for

    def get(self, name: str | None) -> Profile:
        name = name or DEFAULT_PROFILE
        profile = self.profiles.get(name)
        if profile is None:
            known = ", ".join(sorted(self.profiles))
            raise ProfileError(f"no profile {name!r}; known profiles: {known} (see `coder-tui profiles`)")
        return profile


def user_dir() -> Path:
    return paths.config_dir() / "profiles"


def read_profile(path: Path, text: str | None = None) -> Profile:
    """One profile file, validated; errors name the file and the field."""
    try:
        raw = text if text is not None else path.read_text("utf-8")
        data = tomllib.loads(raw)
    except OSError as exc:
        raise ProfileError(f"cannot read {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path} is not valid TOML: {exc}") from None
    data.setdefault("name", path.stem)
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        key, problem = first_problem(exc, "(top level)")
        raise ProfileError(f"{path}: field `{key}`: {problem}") from None
    if profile.system_prompt_file:
        if profile.system_prompt:
            raise ProfileError(f"{path}: give `system_prompt` or `system_prompt_file`, not both")
        prompt_path = path.parent / profile.system_prompt_file
        try:
            profile.system_prompt = prompt_path.read_text("utf-8")
        except OSError as exc:
            raise ProfileError(f"{path}: field `system_prompt_file`: cannot read {prompt_path}: "
                               f"{exc.strerror}") from None
    profile._source = str(path)
    return profile


def _builtin() -> list[Profile]:
    folder = resources.files("agent.profiles")
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            profile = read_profile(Path(entry.name), entry.read_text("utf-8"))
            profile._source = "built in"
            found.append(profile)
    return found


def _folder(folder: Path) -> list[Profile]:
    if not folder.is_dir():
        return []
    return [read_profile(path) for path in sorted(folder.glob("*.toml"))]


def restrict_untrusted(profile: Profile) -> tuple[Profile, list[str]]:
    """A workspace profile without what only a trusted folder may ask for, and what was dropped."""
    notes: list[str] = []
    tools = [t for t in profile.tools if t not in EXECUTING]
    if len(tools) != len(profile.tools):
        dropped = ", ".join(t for t in profile.tools if t in EXECUTING)
        notes.append(f"{profile.source}: tools {dropped} ignored (the folder is not trusted)")
    mode = profile.mode
    if mode == "allow":
        notes.append(f"{profile.source}: mode = \"allow\" ignored (the folder is not trusted)")
        mode = None
    return profile.model_copy(update={"tools": tools, "mode": mode}), notes


def load_profiles(workspace: Path | None = None, trusted: bool = False) -> ProfileSet:
    """Built-in, user and workspace profiles (later ones replace earlier ones of the same name)."""
    result = ProfileSet()
    for profile in [*_builtin(), *_folder(user_dir())]:
        result.profiles[profile.name] = profile
    if workspace is not None:
        for profile in _folder(workspace / WORKSPACE_DIR):
            if not trusted:
                profile, notes = restrict_untrusted(profile)
                result.ignored.extend(notes)
            result.profiles[profile.name] = profile
    return result
