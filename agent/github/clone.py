"""`--clone`: a blobless clone in the user cache dir, one git worktree per session.

The clone (`--filter=blob:none`, no checkout) is made once per repository and fetched on later
runs; each session works in its own worktree on its own work branch, so sessions never touch
each other's files. Publishing commits whatever changed and pushes the work branch (never with
force); if the branch moved on the remote, the commit is rebased onto it when that applies
cleanly, otherwise nothing is pushed and the commit stays local. A token reaches git only
through the environment of each git process (an http.extraHeader), never the git config.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent import gitsafe, paths
from agent.github.auth import TokenSource
from agent.github.errors import GitHubError, PublishConflict
from agent.github.publish import PublishResult, subject_line
from agent.github.remote import StagedFile
from agent.workspaces.base import ProgressFn

STAGES = {  # GitPython RemoteProgress op codes (1 << n)
    4: "counting objects", 8: "compressing objects", 16: "writing objects", 32: "receiving objects",
    64: "resolving deltas", 128: "finding sources", 256: "checking out files",
}
STATUS = {"A": "added", "M": "modified", "D": "deleted"}


def git_env(clone_url: str, token: TokenSource) -> dict[str, str]:
    """Environment for git: never prompt; the token as an HTTP header scoped to the clone's host."""
    env = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}
    parts = urlsplit(clone_url)
    if token.token is not None and parts.scheme == "https":
        basic = base64.b64encode(f"x-access-token:{token.token.get_secret_value()}".encode()).decode()
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=f"http.https://{parts.netloc}/.extraHeader",
                   GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}")
    return env


def clone_location(clone_url: str, full_name: str) -> Path:
    host = urlsplit(clone_url).hostname or "local"
    return paths.cache_dir() / "github" / host / full_name


def _handler(progress: ProgressFn | None) -> Any:
    from git import RemoteProgress

    class Reporter(RemoteProgress):
        def update(self, op_code: int, cur_count: Any, max_count: Any = None, message: str = "") -> None:
            if progress is not None:
                stage = STAGES.get(op_code & self.OP_MASK, "working")
                progress(stage, int(cur_count or 0), int(max_count or 0))

    return Reporter()


def _ensure_clone(url: str, dest: Path, env: dict[str, str], progress: ProgressFn | None) -> None:
    import git

    if (dest / ".git").exists():
        repo = gitsafe.repo(dest, drivers=False)
        with repo.git.custom_environment(**env):
            repo.remotes.origin.fetch(progress=_handler(progress), prune=True, tags=True)
        return
    paths.private_dir(dest.parent)
    partial = dest.with_name(dest.name + ".partial")  # an interrupted clone is never mistaken for one
    shutil.rmtree(partial, ignore_errors=True)
    git.Repo.clone_from(url, partial, progress=_handler(progress), env={**gitsafe.environment(base={}), **env},
                        multi_options=["--filter=blob:none", "--no-checkout"])
    partial.rename(dest)


async def ensure_clone(url: str, dest: Path, env: dict[str, str], progress: ProgressFn | None) -> None:
    """Clone (blobless) or fetch the cached clone."""
    from git import GitCommandError

    try:
        await asyncio.to_thread(_ensure_clone, url, dest, env, progress)
    except GitCommandError as exc:
        raise GitHubError(f"git could not clone or fetch {url}: {_git_reason(exc)}") from None


def _start_point(repo: Any, ref: str) -> str:
    for candidate in (f"refs/remotes/origin/{ref}", f"refs/tags/{ref}", ref):
        try:
            return repo.git.rev_parse("--verify", "-q", f"{candidate}^{{commit}}")
        except Exception:  # noqa: BLE001 - GitCommandError: try the next form
            continue
    raise GitHubError(f"{ref!r} is not a branch, tag or commit of the clone")


def _free_branch(repo: Any, name: str) -> str:
    taken = {r.path.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")
             for r in repo.refs if r.path.startswith(("refs/heads/", "refs/remotes/origin/"))}
    for candidate in [name] + [f"{name}-{n}" for n in range(2, 100)]:
        if candidate not in taken:
            return candidate
    raise GitHubError(f"no free branch name like {name}")


def _add_worktree(clone: Path, worktree: Path, name: str, ref: str, env: dict[str, str]) -> tuple[str, str]:
    repo = gitsafe.repo(clone, drivers=False)
    start = _start_point(repo, ref)
    branch = _free_branch(repo, name)
    paths.private_dir(worktree.parent)
    with repo.git.custom_environment(**env):
        repo.git.worktree("prune")
        repo.git.worktree("add", "-b", branch, str(worktree), start)
    return branch, start


async def add_worktree(clone: Path, name: str, ref: str, env: dict[str, str]) -> tuple[Path, str, str]:
    """A new worktree on a fresh work branch at ref: (path, branch, start commit)."""
    from git import GitCommandError

    slug = name.replace("/", "-")
    worktree = clone.with_name(clone.name + ".worktrees") / slug
    n = 2
    while worktree.exists():
        worktree = worktree.with_name(f"{slug}-{n}")
        n += 1
    try:
        branch, start = await asyncio.to_thread(_add_worktree, clone, worktree, name, ref, env)
    except GitCommandError as exc:
        raise GitHubError(f"git could not check out {ref}: {_git_reason(exc)}") from None
    return worktree, branch, start


def _git_reason(exc: Any) -> str:
    text = (getattr(exc, "stderr", "") or str(exc)).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("stderr:")]
    return (lines[-1] if lines else text).strip("'")[:300]


class ClonePublisher:
    """Commit what changed in the worktree and push the work branch."""

    def __init__(self, worktree: Path, branch: str, start: str, env: Callable[[], dict[str, str]],
                 identity: Callable[[], tuple[str, str] | None]) -> None:
        self.worktree = worktree
        self._branch = branch
        self.start = start
        self.env = env
        self.identity = identity

    @property
    def branch(self) -> str:
        return self._branch

    def _repo(self) -> Any:
        return gitsafe.repo(self.worktree, drivers=False)

    def _upstream(self, repo: Any) -> str | None:
        try:
            return repo.git.rev_parse("--verify", "-q", f"refs/remotes/origin/{self._branch}")
        except Exception:  # noqa: BLE001 - no such ref yet
            return None

    def has_unpublished(self) -> bool:
        repo = self._repo()
        if repo.git.status("--porcelain"):
            return True
        base = self._upstream(repo) or self.start
        return int(repo.git.rev_list("--count", f"{base}..HEAD")) > 0

    def has_published(self) -> bool:
        return self._upstream(self._repo()) is not None

    def changed_files(self) -> list[StagedFile]:
        """Uncommitted changes in the worktree, for the status pane."""
        out = self._repo().git.status("--porcelain", "--untracked-files=all")
        files = []
        for line in out.splitlines():
            code, path = line[:2].strip(), line[3:]
            status = "added" if code in ("??", "A") else STATUS.get(code[:1], "modified")
            files.append(StagedFile(path, status))  # type: ignore[arg-type]
        return files

    async def publish(self, title: str | None = None) -> PublishResult:
        from git import GitCommandError

        try:
            return await asyncio.to_thread(self._publish, title)
        except GitCommandError as exc:
            raise GitHubError(f"publishing {self._branch} failed: {_git_reason(exc)}") from None

    def _publish(self, title: str | None) -> PublishResult:
        repo = self._repo()
        env = dict(self.env())
        if not _configured(repo, "user.email") and (who := self.identity()):
            env.update(GIT_AUTHOR_NAME=who[0], GIT_AUTHOR_EMAIL=who[1],
                       GIT_COMMITTER_NAME=who[0], GIT_COMMITTER_EMAIL=who[1])
        with repo.git.custom_environment(**env):
            repo.git.add("-A")
            parent = repo.head.commit.hexsha
            files = _staged_files(repo)
            if files:
                self._commit(repo, title, files)
            upstream = self._upstream(repo)
            if int(repo.git.rev_list("--count", f"{upstream or self.start}..HEAD")) == 0:
                raise GitHubError("nothing to publish: no file has been changed")
            rebased = self._push(repo)
        head = repo.head.commit
        return PublishResult(self._branch, head.hexsha, parent, files, head.message, upstream is None, rebased)

    def _commit(self, repo: Any, title: str | None, files: list[StagedFile]) -> None:
        counts = {}
        for line in repo.git.diff(*gitsafe.safe_args(["--cached", "--numstat"])).splitlines():
            added, removed, path = line.split("\t", 2)
            counts[path] = f"+{added} -{removed}"
        subject = (title or "").strip().splitlines()[0] if (title or "").strip() else subject_line(files)
        body = "\n".join(f"- {f.status}: {f.path} ({counts.get(f.path, 'binary')})" for f in files)
        repo.git.commit("-m", f"{subject}\n\n{body}\n\nPublished by coder-tui.")

    def _push(self, repo: Any) -> str | None:
        """Push without force; on a rejection rebase onto the remote branch once. Returns what we rebased onto."""
        from git import GitCommandError

        refspec = f"HEAD:refs/heads/{self._branch}"
        try:
            repo.git.push("origin", refspec)
            return None
        except GitCommandError as exc:
            if "rejected" not in str(exc) and "fetch first" not in str(exc):
                raise
        repo.git.fetch("origin", f"+refs/heads/{self._branch}:refs/remotes/origin/{self._branch}")
        onto = repo.git.rev_parse(f"refs/remotes/origin/{self._branch}")
        try:
            repo.git.rebase(onto)
        except GitCommandError:
            repo.git.rebase("--abort")
            raise PublishConflict(
                f"branch {self._branch} moved on GitHub (now {onto[:7]}) and its changes conflict with "
                "yours; nothing was pushed. Your commit stays on the local branch in the clone."
            ) from None
        repo.git.push("origin", refspec)
        return onto


def _staged_files(repo: Any) -> list[StagedFile]:
    files = []
    for line in repo.git.diff(*gitsafe.safe_args(["--cached", "--name-status", "--no-renames"])).splitlines():
        code, path = line.split("\t", 1)
        files.append(StagedFile(path, STATUS.get(code[:1], "modified")))  # type: ignore[arg-type]
    return files


def _configured(repo: Any, key: str) -> bool:
    try:
        return bool(repo.git.config("--get", key).strip())
    except Exception:  # noqa: BLE001 - git exits 1 when the key is unset
        return False
