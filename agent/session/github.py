"""Opening a GitHub workspace for a front end (`coder-tui run --github`, the app's `--github`).

`open_github` parses the repository, finds a token, connects, turns `--issue N` into the task,
and opens either the API workspace or (`--clone`) a worktree of the cached clone. With
`--resume` it restores the saved repository pointer and overlay (or worktree) instead. The front
end then creates its AgentSession with `registry` and calls `attach(session)`, which records
the workspace's state into the session and routes rate-limit waits into the event stream.
`status` and `open_pr` are what a status pane and a `/pr` command call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.github.auth import discover_token
from agent.github.client import TOKEN_HINT, ClientSettings, GitHubClient, Notify, resolve_api_url
from agent.github.errors import GitHubError
from agent.github.issues import PullRequestInfo, get_issue, issue_task
from agent.github.publish import subject_line
from agent.github.remote import RemoteRepo, RepoStatus, work_branch_name
from agent.github.spec import RepoSpec, parse_repo_spec
from agent.github.switch import switched_from
from agent.github.state import ClonePointer
from agent.secrets import register
from agent.workspaces.base import ProgressFn, Workspace
from agent.workspaces.github import ClonedGitHubWorkspace, GitHubWorkspace

if TYPE_CHECKING:
    from agent.events import Published
    from agent.session.core import AgentSession


@dataclass
class GitHubRequest:
    spec: str
    clone: bool = False
    issue: int | None = None
    prompt: str = ""
    resume: str | None = None
    token_needed: bool = False  # a session recorded on GitHub, resumed without --github: it works on its branch


@dataclass
class OpenedGitHub:
    workspace: GitHubWorkspace | ClonedGitHubWorkspace
    prompt: str  # the task: the issue (when --issue) followed by what the user typed
    client: GitHubClient

    def registry(self) -> Any:
        """The default tools plus the GitHub ones (offered only in GitHub workspaces)."""
        from agent.tools import default_tools
        from agent.tools.github import GITHUB_TOOLS
        from agent.tools.registry import ToolRegistry

        return ToolRegistry(default_tools() + [cls() for cls in GITHUB_TOOLS])

    def attach(self, session: AgentSession) -> None:
        self.workspace.attach(session.record_state, resumed=session.resumed)
        self.client.notify = session.emit  # rate-limit waits become `retrying` events


async def open_github(request: GitHubRequest, config: Any, notify: Notify | None = None,
                      progress: ProgressFn | None = None, store: Any = None,
                      settings: dict[str, Any] | None = None) -> OpenedGitHub:
    """Open the workspace a GitHub launch asks for (GitHubError or SessionError on failure).

    `settings` overrides ClientSettings fields (e.g. write_interval in tests).
    """
    spec = parse_repo_spec(request.spec)
    secret = config.github_token.get_secret_value() if getattr(config, "github_token", None) else None
    token = discover_token(config_token=secret)
    if token.token is None and request.token_needed:
        raise GitHubError(f"session {request.resume} was recorded on github:{spec.full_name}, and resuming it "
                          f"needs a GitHub token: {TOKEN_HINT}")
    if token.token is not None:
        register(token.token.get_secret_value())
    api_url = resolve_api_url(getattr(config, "github_api_url", None))
    client = GitHubClient(ClientSettings(api_url=api_url, token=token, **(settings or {})), notify)
    remote = RemoteRepo(client, spec)
    await remote.connect()
    saved = _saved_state(request, remote.full_name, store)
    prompt, task = request.prompt.strip(), request.prompt
    if request.issue is not None:
        issue, comments = await get_issue(remote, request.issue)
        prompt = issue_task(issue, comments) + (f"\n\n{prompt}" if prompt else "")
        task = f"issue {issue.number} {issue.title}"
    if request.clone:
        workspace: GitHubWorkspace | ClonedGitHubWorkspace = await _open_clone(remote, saved, task, progress)
    else:
        workspace = await _open_api(remote, saved, task)
    return OpenedGitHub(workspace, prompt, client)


def label_for(full_name: str, clone: bool) -> str:
    return f"github:{full_name}" + (" (clone)" if clone else "")


def _saved_state(request: GitHubRequest, full_name: str, store: Any) -> dict[str, Any] | None:
    if not request.resume:
        return None
    from agent.session.record import SessionStore, load

    path = (store or SessionStore()).resolve(request.resume, workspace=label_for(full_name, request.clone))
    return load(path).state


async def _open_api(remote: RemoteRepo, saved: dict[str, Any] | None, task: str) -> GitHubWorkspace:
    if saved is None:
        await remote.start(task)
        return GitHubWorkspace(remote)
    state = GitHubWorkspace.saved_state(saved)
    if state is None:
        raise GitHubError("that session recorded no GitHub repository; it cannot be resumed with --github")
    left = switched_from(saved)
    if state.repository.lower() != remote.full_name.lower():
        if remote.full_name.lower() not in left:
            raise GitHubError(f"that session worked on {state.repository}, not {remote.full_name}")
        # the session switched repository (set_repository_context, /repo): resume where it went
        owner, name = state.repository.split("/")
        remote = RemoteRepo(remote.client, RepoSpec(owner, name, state.ref))
        await remote.connect()
    await remote.resume(state)
    workspace = GitHubWorkspace(remote)
    workspace.left = left
    return workspace


async def _open_clone(remote: RemoteRepo, saved: dict[str, Any] | None, task: str,
                      progress: ProgressFn | None) -> ClonedGitHubWorkspace:
    from pathlib import Path

    from agent.github.clone import ClonePublisher, add_worktree, clone_location, ensure_clone, git_env

    clone_url = str(remote.api.raw_data.get("clone_url") or "")
    env = git_env(clone_url, remote.client.settings.token)
    if saved is not None:
        pointer = ClonedGitHubWorkspace.saved_pointer(saved)
        if pointer is None:
            raise GitHubError("that session recorded no clone; resume it without --clone")
        if not Path(pointer.worktree).is_dir():
            raise GitHubError(f"the clone of that session ({pointer.worktree}) is gone; its unpublished "
                              "changes cannot be restored")
    else:
        clone = clone_location(clone_url, remote.full_name)
        await ensure_clone(clone_url, clone, env, progress)
        worktree, branch, start = await add_worktree(clone, work_branch_name(task), remote.ref, env)
        pointer = ClonePointer(repository=remote.full_name, api_url=remote.client.settings.api_url,
                               clone_url=clone_url, ref=remote.ref, default_branch=remote.default_branch,
                               worktree=str(worktree), work_branch=branch, start_commit=start)
    remote.ref = pointer.ref
    remote.ref_is_branch = await remote.branch_head(pointer.ref) is not None
    publisher = ClonePublisher(Path(pointer.worktree), pointer.work_branch, pointer.start_commit,
                               lambda: env, _identity(remote))
    return ClonedGitHubWorkspace(pointer, remote, publisher)


def _identity(remote: RemoteRepo) -> Callable[[], tuple[str, str] | None]:
    """The token owner as a commit author, for clones where git has no user.email."""

    def who() -> tuple[str, str] | None:
        if not remote.client.has_token:
            return ("coder-tui", "coder-tui@users.noreply.github.com")
        try:
            user = remote.client.gh.get_user()
            login, uid = user.login, user.id
            return (user.name or login, user.email or f"{uid}+{login}@users.noreply.github.com")
        except Exception:  # noqa: BLE001 - any failure: a neutral identity rather than no commit
            return ("coder-tui", "coder-tui@users.noreply.github.com")

    return who


def progress_lines(notice: Callable[[str], None]) -> ProgressFn:
    """Progress as occasional lines: each new stage, then every quarter of the way."""
    last: dict[str, int] = {}

    def report(stage: str, done: int, total: int) -> None:
        quarter = (4 * done // total) if total else 0
        if last.get(stage) == quarter:
            return
        last[stage] = quarter
        numbers = f" {100 * done // total}% ({done}/{total})" if total else ""
        notice(f"{stage}{numbers}")

    return report


def status(workspace: Workspace) -> RepoStatus | None:
    """Repository, ref, work branch, staged files and rate limit (None for other workspaces)."""
    link = getattr(workspace, "github", None)
    return link.status() if link is not None else None


async def open_pr(workspace: Workspace, title: str | None = None, body: str = "",
                  draft: bool = False) -> PullRequestInfo:
    """What `/pr` does: publish the changes as one commit and open (or find) the pull request."""
    link = getattr(workspace, "github", None)
    if link is None:
        raise GitHubError("/pr works in GitHub workspaces: start coder-tui with --github OWNER/REPO")
    if not title:
        staged = link.status().staged
        title = subject_line(staged) if staged else f"Changes from {link.publisher.branch}"
    return await link.open_pull_request(title, body, draft)


def unpublished(workspace: Workspace | None) -> list[str]:
    """Paths changed in a GitHub workspace and not yet published (empty for other workspaces)."""
    link = getattr(workspace, "github", None)
    if link is None or not link.publisher.has_unpublished():
        return []
    return [item.path for item in link.status().staged] or ["(commits not yet pushed)"]


async def publish_changes(workspace: Workspace, title: str | None = None) -> Published:
    """One commit of the unpublished changes on the work branch (no pull request), and where it is."""
    from agent.events import Published

    link = getattr(workspace, "github", None)
    if link is None:
        raise GitHubError("publishing works in GitHub workspaces")
    result = await link.publish(title)
    remote = link.remote
    web = str(remote.api.raw_data.get("html_url") or f"https://github.com/{remote.full_name}").rstrip("/")
    return Published(repository=remote.full_name, branch=result.branch, commit=result.commit,
                     compare_url=f"{web}/compare/{remote.pr_base}...{result.branch}",
                     files=[item.path for item in result.files])
