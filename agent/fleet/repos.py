"""The repositories a batch runs on: `--repos FILE` (one a line) or `--repos OWNER/*`.

A line of the file is a GitHub repository (OWNER/REPO, OWNER/REPO@REF or its github.com address)
or a folder a worker can reach (an absolute path, or one starting with `.` or `~`, relative to
the file's folder). Blank lines and `#` comments are skipped; a repository named twice runs once.
`OWNER/*` lists the owner's repositories through the GitHub API (archived ones left out).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from agent.fleet.settings import FleetError

Kind = Literal["github", "local"]
OWNER_ALL = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})/\*$")


async def read_repos(value: str, config: Any = None) -> list[tuple[str, Kind]]:
    """The (target, kind) pairs `--repos` names, in order, without repeats (FleetError when none)."""
    owner = OWNER_ALL.match(value.strip())
    if owner:
        targets: list[tuple[str, Kind]] = [(name, "github") for name in await owner_repos(owner.group(1), config)]
        if not targets:
            raise FleetError(f"--repos {value}: {owner.group(1)} has no repositories this token can see")
        return targets
    path = Path(value).expanduser()
    if not path.is_file():
        raise FleetError(f"--repos {value}: no such file (give a file with one repository or folder a line, "
                         "or OWNER/* for every repository of an owner)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise FleetError(f"--repos {value}: cannot read it ({exc})") from None
    targets = _unique([_target(line, path.parent, value, n) for n, line in enumerate(lines, 1) if _kept(line)])
    if not targets:
        raise FleetError(f"--repos {value}: the file names no repository")
    return targets


def _kept(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#")


def _target(line: str, base: Path, name: str, number: int) -> tuple[str, Kind]:
    from agent.github.errors import InvalidRepoSpec
    from agent.github.spec import parse_repo_spec

    text = line.split(" #", 1)[0].strip()
    if text.startswith(("/", ".", "~")):
        return str((base / Path(text).expanduser()).resolve()), "local"
    try:
        return str(parse_repo_spec(text)), "github"
    except InvalidRepoSpec as exc:
        raise FleetError(f"--repos {name}, line {number}: {exc} (a folder starts with /, . or ~)") from None


def _unique(targets: list[tuple[str, Kind]]) -> list[tuple[str, Kind]]:
    seen: set[str] = set()
    kept = []
    for target, kind in targets:
        key = target.lower() if kind == "github" else target
        if key not in seen:
            seen.add(key)
            kept.append((target, kind))
    return kept


async def owner_repos(owner: str, config: Any) -> list[str]:
    """The full names of an owner's repositories (a user's or an organisation's)."""
    from agent.github.auth import discover_token
    from agent.github.client import ClientSettings, GitHubClient, resolve_api_url
    from agent.github.errors import GitHubError

    secret = config.github_token.get_secret_value() if getattr(config, "github_token", None) else None
    client = GitHubClient(ClientSettings(api_url=resolve_api_url(getattr(config, "github_api_url", None)),
                                         token=discover_token(config_token=secret)))
    try:
        return await client.call(f"listing the repositories of {owner}", lambda: [
            repo.full_name for repo in client.gh.get_user(owner).get_repos() if not repo.archived])
    except GitHubError as exc:
        raise FleetError(f"--repos {owner}/*: {exc}") from None
    finally:
        client.close()
