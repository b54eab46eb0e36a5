"""Git on a user's repository without running what its configuration names.

A repository's `.git/config` is as untrusted as its files: `core.fsmonitor`, hooks, `core.pager`,
filter drivers (clean, smudge, process) and external diff or textconv commands all run programs,
and `git status` alone reaches several of them. Every git process the product starts on a
repository it did not create itself goes through here:

- `-c` overrides switch off fsmonitor, hooks, the pager, editors, signature checks, and blank every filter driver the
  repository's config defines (an empty command is no filter; `required` is lifted so that git
  does not fail on it);
- the environment carries the same overrides (`GIT_CONFIG_PARAMETERS`), so git's own child
  processes (submodules) and GitPython's long-running `cat-file` inherit them;
- diff commands get `--no-ext-diff --no-textconv`, status `--ignore-submodules` and no optional locks.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

NEUTRAL: dict[str, str] = {
    "core.fsmonitor": "false",
    "core.hooksPath": os.devnull,
    "core.pager": "cat",
    "diff.external": "",
    "core.editor": ":",
    "sequence.editor": ":",
    "log.showSignature": "false",
}
DRIVER_KEY = re.compile(r"^filter\..+\.(clean|smudge|process|required)$", re.IGNORECASE)
NO_DIFF_PROGRAMS = ("--no-ext-diff", "--no-textconv")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def overrides(root: Path | str | None = None) -> dict[str, str]:
    """The config overrides for a repository: the fixed ones plus its filter drivers, blanked."""
    values = dict(NEUTRAL)
    if root is not None:
        for key in _driver_keys(root):
            name = key.rsplit(".", 1)[0]
            values[f"{name}.clean"] = values[f"{name}.smudge"] = values[f"{name}.process"] = ""
            values[f"{name}.required"] = "false"
    return values


def _driver_keys(root: Path | str) -> list[str]:
    """Filter driver keys in every config git would read for `root` (reading config runs nothing)."""
    try:
        done = subprocess.run(
            ["git", *_flags(NEUTRAL), "-C", str(root), "config", "--null", "--name-only", "--list"],
            capture_output=True, timeout=5, env=environment(NEUTRAL), stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    names = done.stdout.decode("utf-8", "replace").split("\0")
    return [name for name in names if DRIVER_KEY.match(name)]


def _flags(values: dict[str, str]) -> list[str]:
    flags = ["--no-pager"]
    for key, value in values.items():
        flags += ["-c", f"{key}={value}"]
    return flags


def config_flags(values: dict[str, str]) -> list[str]:
    """`--no-pager` and a `-c KEY=VALUE` pair per override, for a git command line."""
    return _flags(values)


def environment(values: dict[str, str] | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a git process: the overrides, no pager, no prompts, no external diff."""
    env = dict(os.environ if base is None else base)
    for name in ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_ASKPASS", "SSH_ASKPASS"):
        env.pop(name, None)
    env["GIT_CONFIG_PARAMETERS"] = " ".join(_quote(f"{k}={v}") for k, v in (values or NEUTRAL).items())
    env.update(GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_EDITOR=":",
               GIT_SEQUENCE_EDITOR=":")
    return env


def command(root: Path | str, *args: str, values: dict[str, str] | None = None) -> list[str]:
    """The argv for `git ARGS` in `root`, with the overrides and the per-command safety options."""
    values = overrides(root) if values is None else values
    extra: tuple[str, ...] = ()
    if args and args[0] in ("diff", "log", "show"):
        extra = NO_DIFF_PROGRAMS
    elif args and args[0] == "status":
        extra = ("--ignore-submodules=all",)
    return ["git", *_flags(values), "-C", str(root), args[0], *extra, *args[1:]] if args else ["git"]


GIT_LOCATION_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")


def outside_repository(root: Path | str) -> bool:
    """Certainly in no repository: no `.git` in `root` or any folder above it, none of them a
    bare repository, and no GIT_DIR-like variable pointing git elsewhere. Read from the file
    system, so that a run outside a repository starts no git process to learn it (a spawn costs
    a cold start several milliseconds); False means "ask git" (ceilings, ownership and the rest)."""
    if any(os.environ.get(name) for name in GIT_LOCATION_VARIABLES):
        return False
    folder = Path(os.path.abspath(root))
    for place in (folder, *folder.parents):
        try:
            if os.path.lexists(place / ".git") or (os.path.isfile(place / "HEAD") and os.path.isdir(place / "objects")
                                                   and os.path.isdir(place / "refs")):
                return False
        except OSError:
            return False
    return True


def run(root: Path | str, *args: str, timeout: float = 10) -> str | None:
    """stdout of a read-only git command in `root`, or None when git fails or is missing."""
    values = overrides(root) if args and args[0] in ("status", "diff", "add") else dict(NEUTRAL)
    try:
        done = subprocess.run(command(root, *args, values=values), capture_output=True, text=True,
                              timeout=timeout, env=environment(values), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def repo(path: Path | str, drivers: bool = True) -> Any:
    """A GitPython Repo whose every git process carries the overrides.

    `drivers=False` keeps the filter drivers of the user's own config (e.g. Git LFS) for a
    repository the product created itself, whose `.git/config` nobody else wrote.
    """
    import git

    handle = git.Repo(str(path))
    values = overrides(path) if drivers else dict(NEUTRAL)
    handle.git.update_environment(**environment(values, base={}))
    return handle


def safe_args(args: Sequence[str]) -> list[str]:
    """Options that keep a GitPython diff call from running external programs."""
    return [*NO_DIFF_PROGRAMS, *args]
