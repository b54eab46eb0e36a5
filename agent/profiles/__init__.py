"""Agent profiles: named agents with their own prompt, agent type, tool set, mode, models and limits.

Profiles are TOML files: built in (this package), in the user config folder (`profiles/*.toml`)
and in the workspace (`.coder-tui/profiles/*.toml`); a later folder's profile replaces an earlier
one of the same name. Workspace files come with the repository, so they are untrusted: they are
read inside the workspace, and unless the folder is trusted the rule of
agent/workspace_input/policy.py (`PROFILE`) leaves out what would pick a model, run commands or
raise the mode; `ProfileSet.ignored` says what was. A workspace profile's `system_prompt_file` is
read inside the workspace whatever the trust (agent/workspace_input/files.py).
"""

from __future__ import annotations

import posixpath
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from agent import paths
from agent.config import first_problem
from agent.events import Mode
from agent.workspace_input import files as workspace_files
from agent.workspace_input.policy import PROFILE, Context, Ignored, screen

DEFAULT_PROFILE = "coder"
WORKSPACE_DIR = ".coder-tui/profiles"
AgentType = Literal["iterative", "stream", "react"]
KINDS = ("read", "edit", "exec", "network", "mcp")


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
    save_code_blocks: bool = False  # agent = "stream": an answer's code blocks that name a file are proposed as it
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
    ignored: list[Ignored] = field(default_factory=list)  # what workspace profiles asked for and did not get

    def get(self, name: str | None) -> Profile:
        name = name or DEFAULT_PROFILE
        profile = self.profiles.get(name)
        if profile is None:
            known = ", ".join(sorted(self.profiles))
            raise ProfileError(f"no profile {name!r}; known profiles: {known} (see `coder-tui profiles`)")
        return profile


def user_dir() -> Path:
    return paths.config_dir() / "profiles"


def read_profile(path: Path, text: str | None = None, workspace: Path | None = None) -> Profile:
    """One profile file, validated; errors name the file and the field. `workspace`: the profile
    came with that workspace, so the prompt file it names is read inside it."""
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
        profile.system_prompt = _prompt_file(path, profile.system_prompt_file, workspace)
    profile._source = str(path)
    return profile


def _prompt_file(path: Path, name: str, workspace: Path | None) -> str:
    if workspace is None:  # the user's own profile: its file may be anywhere the user put it
        prompt_path = path.parent / name
        try:
            return prompt_path.read_text("utf-8")
        except OSError as exc:
            raise ProfileError(f"{path}: field `system_prompt_file`: cannot read {prompt_path}: "
                               f"{exc.strerror}") from None
    folder = path.parent.relative_to(workspace).as_posix()
    inside = name if name.startswith(("/", "~")) else posixpath.normpath(posixpath.join(folder, name))
    try:
        found = workspace_files.read_inside(workspace, inside)
    except workspace_files.OutsideWorkspace as exc:
        raise workspace_files.OutsideWorkspace(f"system_prompt_file = {name!r}: {exc}") from None
    if found is None:
        raise ProfileError(f"{path}: field `system_prompt_file`: there is no file {inside} in the workspace")
    return found


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


def workspace_profiles(workspace: Path, trusted: bool, base_mode: str = "ask") -> tuple[list[Profile], list[Ignored]]:
    """The workspace's own profiles, each file and the prompt file it names read inside the
    workspace, and (untrusted) screened by the policy; with what was left out and why."""
    found: list[Profile] = []
    ignored: list[Ignored] = []
    try:
        names = workspace_files.listing(workspace, WORKSPACE_DIR, ".toml")
    except workspace_files.OutsideWorkspace as exc:
        return [], [Ignored("the profiles folder", str(exc), str(workspace / WORKSPACE_DIR), False)]
    for rel in names:
        path = workspace / rel
        try:
            text = workspace_files.read_inside(workspace, rel)
            profile = read_profile(path, text, workspace) if text is not None else None
        except workspace_files.OutsideWorkspace as exc:
            ignored.append(Ignored("the whole profile", str(exc), str(path), False))
            continue
        except ProfileError as exc:  # a broken file of a folder you trust stops the run; an untrusted one is skipped
            if trusted:
                raise
            ignored.append(Ignored("the whole profile", str(exc).removeprefix(f"{path}: "), str(path), False))
            continue
        if profile is None:
            continue
        given = profile.model_dump(include=profile.model_fields_set)
        kept, refused = screen(PROFILE, given, str(path), Context(base_mode=base_mode), trusted)
        ignored.extend(refused)
        if refused:
            updates = {key: kept.get(key, Profile.model_fields[key].get_default(call_default_factory=True))
                       for key in given}
            profile = profile.model_copy(update=updates)
        found.append(profile)
    return found, ignored


def load_profiles(workspace: Path | None = None, trusted: bool = False, base_mode: str = "ask") -> ProfileSet:
    """Built-in, user and workspace profiles (later ones replace earlier ones of the same name).
    `base_mode`: the mode the user chose, above which an untrusted profile may not go."""
    result = ProfileSet()
    for profile in [*_builtin(), *_folder(user_dir())]:
        result.profiles[profile.name] = profile
    if workspace is not None:
        profiles, result.ignored = workspace_profiles(workspace, trusted, base_mode)
        for profile in profiles:
            result.profiles[profile.name] = profile
    return result
