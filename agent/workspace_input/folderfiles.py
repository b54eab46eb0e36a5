"""A workspace folder's own config files, read for `load_config`: its `.coder-tui.toml`, Claude
Code's settings files, and whether the trust the user gave the folder still covers them
(agent/workspace_input/grants.py). It sits beside agent/config.py (each imports the other's parts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agent.workspace_input import files as workspace_files
from agent.workspace_input import grants
from agent.workspace_input.identity import decision
from agent.workspace_input.policy import CLAUDE_SETTINGS, CONFIG, Context, Ignored, screen

WORKSPACE_FILE = ".coder-tui.toml"


@dataclass
class FolderFiles:
    """What a workspace folder's config files say, before and after the trust rule."""

    settings: dict[str, Any]  # its .coder-tui.toml (empty when missing or broken)
    claude: list[tuple[str, dict[str, Any]]]  # (name, our permissions and hooks) per Claude Code settings file
    ctx: Context
    ignored: list[Ignored] = field(default_factory=list)
    broken: str | None = None  # why .coder-tui.toml cannot be used (stops the run of a trusted folder)

    def grants(self, root: Path) -> dict[str, str]:
        """What trusting the folder grants now (digest -> what it is)."""
        return grants.items(root, self.settings, self.claude, self.ctx)

    def layers(self, root: Path, trusted: bool) -> list[tuple[str, dict[str, Any]]]:
        """The config layers these files give, screened by the trust rule (what was refused: `ignored`)."""
        found = []
        for name, kind, values in [(WORKSPACE_FILE, CONFIG, self.settings),
                                   *((n, CLAUDE_SETTINGS, v) for n, v in self.claude)]:
            kept, refused = screen(kind, values, str(root / name), self.ctx, trusted)
            self.ignored.extend(refused)
            found.append((str(root / name), kept))
        return found


def read(root: Path, user: dict[str, Any]) -> FolderFiles:
    """The folder's config files, read inside it (a link out or a FIFO is refused, with why)."""
    ctx = Context(base_mode=user.get("mode", "ask"), user=user)
    found = FolderFiles({}, [], ctx)
    _read_config(root, found)
    _read_claude(root, found)
    return found


def trusted(root: Path, user: dict[str, Any], found: FolderFiles) -> bool:
    """Whether the user's trust covers the folder as it is now; what it does not cover is said."""
    answer = decision(root, user)
    if answer.note and (found.settings or found.claude):
        found.ignored.append(Ignored("the trust you gave this folder", answer.note, str(root), False))
    if answer.trusted is not True:
        return False
    new = grants.unconfirmed(found.grants(root), answer.confirmed)
    if not new:
        return True
    shown = "; ".join(new[:6]) + (f"; and {len(new) - 6} more" if len(new) > 6 else "")
    why = ("coder-tui now remembers what your trust covers, and this trust was given before: confirm it once"
           if answer.confirmed is None else "its files changed since you trusted it")
    found.ignored.append(Ignored("the trust you gave this folder", f"{why}; what they would let the agent do "
                                 f"waits for you to confirm it: {shown}", str(root)))
    return False


def _read_config(root: Path, found: FolderFiles) -> None:
    from agent.config import ConfigError, read_settings

    path = root / WORKSPACE_FILE
    try:
        text = workspace_files.read_inside(root, WORKSPACE_FILE, cap=1 << 20)
    except workspace_files.OutsideWorkspace as exc:
        found.ignored.append(Ignored("the whole file", str(exc), str(path), False))
        return
    try:
        found.settings = {} if text is None else read_settings(path, text).given()
    except ConfigError as exc:  # a folder you trust: an error to fix; another: left out, said
        found.broken = str(exc)
        found.ignored.append(Ignored("the whole file", str(exc).removeprefix(f"{path}: "), str(path), False))


def _read_claude(root: Path, found: FolderFiles) -> None:
    """Claude Code's settings files (their permissions and hooks), in our form."""
    if not os.path.lexists(root / ".claude"):
        return  # none to read (nor a link to report): their models are not even imported
    from agent.config import first_problem
    from agent.permissions import claude
    from agent.permissions.settings import HookSettings, PermissionSettings

    models: dict[str, type[BaseModel]] = {"permissions": PermissionSettings, "hooks": HookSettings}
    for name, values, problems in claude.read(root):
        source = str(root / name)
        for problem in problems:
            setting, _, why = problem.partition(": ")
            found.ignored.append(Ignored(setting, why, source, False))
        try:
            values = {key: models[key].model_validate(value).model_dump(exclude_defaults=True)
                      for key, value in values.items() if value}
        except ValidationError as exc:
            key, problem = first_problem(exc, "(top level)")
            found.ignored.append(Ignored("the whole file", f"{key}: {problem}", source, False))
            continue
        found.claude.append((name, values))
