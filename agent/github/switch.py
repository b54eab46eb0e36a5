"""Moving a GitHub session to another repository or branch (seed 001 `set_repository_context`).

The model calls the `set_repository_context` tool, the user types `/repo OWNER/REPO[@REF]` in the
app; both end here. The session keeps its conversation and its workspace object: the workspace is
rebound to the new repository (tree, work branch, publisher), so the file tools, the map (keyed by
the repository's name) and publishing follow it, and the side panel shows it. The new pointer is
recorded in the session, with the repositories it left, so `--resume` opens the new one.

A switch is refused while the current repository has unpublished edits (they would otherwise be
stranded on a repository the session no longer shows): publish them (`/pr`, create_pull_request)
first. `--clone` sessions cannot switch: their workspace is a folder with a shell, and moving it
means another clone; the message says to start again with --github.
"""

from __future__ import annotations

from typing import Any

from agent.github.errors import GitHubError
from agent.github.remote import RemoteRepo
from agent.github.spec import parse_repo_spec

SWITCHED_KEY = "github.switched"  # the repositories a session left (lowercase OWNER/REPO), oldest first
NOT_GITHUB = "the session is not on GitHub: repository switching works in sessions started with --github OWNER/REPO"
NOT_API = ("switching repository is not available in --clone sessions; start coder-tui again with "
           "--github {spec} --clone")


def describe(workspace: Any) -> str:
    """The current repository, ref and work branch (GitHubError outside GitHub sessions)."""
    link = getattr(workspace, "github", None)
    if link is None:
        raise GitHubError(NOT_GITHUB)
    status = link.status()
    return f"{status.repository}@{status.ref} (work branch {status.work_branch})"


async def switch_repository(workspace: Any, spec_text: str, task: str = "") -> str:
    """Rebind an API GitHub workspace to `spec_text` (OWNER/REPO[@REF]); what it now works on."""
    link = getattr(workspace, "github", None)
    if link is None:
        raise GitHubError(NOT_GITHUB)
    spec = parse_repo_spec(spec_text)
    if getattr(workspace, "kind", "") != "github":  # the API workspace (agent/workspaces/github.py)
        raise GitHubError(NOT_API.format(spec=spec))
    old = workspace.remote
    if workspace.publisher.has_unpublished():
        count = len(old.staged())
        raise GitHubError(f"{count} unpublished change(s) on {old.full_name}: publish them first (/pr or "
                          f"create_pull_request) so they are not left behind; nothing was switched")
    if spec.full_name.lower() == old.full_name.lower() and (spec.ref or old.default_branch) == old.ref:
        return f"already on {describe(workspace)}"
    remote = RemoteRepo(old.client, spec)
    await remote.connect()
    await remote.start(task)
    workspace.rebind(remote)
    return describe(workspace)


def switched_from(state: dict[str, Any]) -> list[str]:
    """The repositories a recorded session left (lowercase OWNER/REPO)."""
    value = state.get(SWITCHED_KEY)
    return [str(v) for v in value] if isinstance(value, list) else []
