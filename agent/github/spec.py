"""Which repository the user means: OWNER/REPO, OWNER/REPO@REF or a github.com URL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from agent.github.errors import InvalidRepoSpec

# GitHub's own rules: owners are 1-39 letters, digits or single hyphens (not first);
# repository names are letters, digits, '.', '-', '_' (up to 100, never "." or "..").
_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_FORMS = (
    "OWNER/REPO, OWNER/REPO@REF, https://github.com/OWNER/REPO or "
    "https://github.com/OWNER/REPO/tree/REF"
)
_GITHUB_HOSTS = {"github.com", "www.github.com"}


@dataclass(frozen=True)
class RepoSpec:
    owner: str
    name: str
    ref: str | None = None  # None: the repository's default branch

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def __str__(self) -> str:
        return f"{self.full_name}@{self.ref}" if self.ref else self.full_name


def parse_repo_spec(text: str) -> RepoSpec:
    """Parse what the user typed; InvalidRepoSpec says what was wrong and which forms work."""
    raw = text.strip()
    if not raw:
        raise InvalidRepoSpec(f"no repository given; use {_FORMS}")
    if raw.startswith("git@"):
        return _from_ssh(raw)
    if "://" in raw or raw.lower().startswith(("github.com/", "www.github.com/")):
        return _from_url(raw)
    path, at, ref = raw.partition("@")
    parts = path.split("/")
    if len(parts) != 2:
        raise InvalidRepoSpec(f"{text!r} is not a repository; use {_FORMS}")
    return _build(parts[0], parts[1], ref if at else None, text)


def _from_url(raw: str) -> RepoSpec:
    url = urlsplit(raw if "://" in raw else f"https://{raw}")
    if url.scheme not in ("http", "https") or (url.hostname or "").lower() not in _GITHUB_HOSTS:
        raise InvalidRepoSpec(
            f"{raw!r} is not a github.com address; use {_FORMS} "
            "(for GitHub Enterprise, give OWNER/REPO and set the API URL)"
        )
    parts = [unquote(p) for p in url.path.split("/") if p]
    if len(parts) < 2:
        raise InvalidRepoSpec(f"{raw!r} names no repository; use {_FORMS}")
    owner, name, rest = parts[0], parts[1], parts[2:]
    name = name.removesuffix(".git")
    if not rest:
        return _build(owner, name, None, raw)
    if rest[0] == "tree" and len(rest) > 1:
        return _build(owner, name, "/".join(rest[1:]), raw)
    raise InvalidRepoSpec(
        f"{raw!r} points inside the repository ({'/'.join(rest)}); "
        f"give the repository or a branch: {_FORMS}"
    )


def _from_ssh(raw: str) -> RepoSpec:
    host, _, path = raw.removeprefix("git@").partition(":")
    if host.lower() not in _GITHUB_HOSTS or path.count("/") != 1:
        raise InvalidRepoSpec(f"{raw!r} is not a github.com repository; use {_FORMS}")
    owner, name = path.split("/")
    return _build(owner, name.removesuffix(".git"), None, raw)


def _build(owner: str, name: str, ref: str | None, original: str) -> RepoSpec:
    if not _OWNER.match(owner):
        raise InvalidRepoSpec(
            f"{owner!r} in {original!r} is not a GitHub owner name "
            "(letters, digits and single hyphens, at most 39)"
        )
    if not _NAME.match(name) or name in (".", ".."):
        raise InvalidRepoSpec(
            f"{name!r} in {original!r} is not a repository name (letters, digits, '.', '-', '_')"
        )
    if ref is not None:
        problem = ref_problem(ref)
        if problem:
            raise InvalidRepoSpec(f"ref {ref!r} in {original!r} is not valid: {problem}")
    return RepoSpec(owner, name, ref)


def ref_problem(ref: str) -> str | None:
    """Why a branch, tag or commit name is unusable (git check-ref-format's rules), or None."""
    if not ref:
        return "it is empty"
    if any(ch.isspace() or ord(ch) < 32 or ch in "~^:?*[\\" for ch in ref):
        return "it contains a space or one of ~ ^ : ? * [ \\"
    if ".." in ref or "@{" in ref or "//" in ref:
        return "it contains '..', '@{' or '//'"
    if ref.startswith(("/", "-", ".")) or ref.endswith(("/", ".", ".lock")):
        return "it starts with '/', '-' or '.', or ends with '/', '.' or '.lock'"
    if any(part.startswith(".") for part in ref.split("/")):
        return "a path component starts with '.'"
    return None
