"""Publishing a GitHub job's edits once per batch and repository, however often the job runs.

Every attempt of a job works on the batch's branch (`coder-tui/fleet-BATCH`). Before publishing,
an attempt takes the marker `B:published:REPO` in Redis; it then creates the branch (the last step
of a publish through the API: blobs, tree and commit come first) and marks it published with the
commit. A later attempt (the first one's worker died) finds the marker: published, or held by the
dead attempt. Then the branch decides: when it exists the dead attempt published and this one
adopts its commit (its own edits are dropped); when it does not, this attempt takes the marker
over and publishes. Only one attempt of a job is alive at a time (its lease), so no two publish.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent.fleet.approver import JobRef
from agent.fleet.model import BatchSpec

if TYPE_CHECKING:
    from agent.workspaces.github import ClonedGitHubWorkspace, GitHubWorkspace

    GitHub = GitHubWorkspace | ClonedGitHubWorkspace


@dataclass
class Outcome:
    """Where a job's edits went."""

    branch: str = ""
    commit: str = ""
    compare_url: str = ""
    files: list[str] = field(default_factory=list)
    pr_url: str = ""
    adopted: bool = False  # an earlier attempt of the job published it

    def note(self) -> str:
        where = f"pull request {self.pr_url}" if self.pr_url else f"branch {self.branch} ({self.commit[:7]})"
        return f"published by an earlier attempt: {where}" if self.adopted else f"published {where}"


def _compare(workspace: GitHub, branch: str) -> str:
    remote = workspace.remote
    web = str(remote.api.raw_data.get("html_url") or f"https://github.com/{remote.full_name}").rstrip("/")
    return f"{web}/compare/{remote.pr_base}...{branch}"


async def earlier(job: JobRef, spec: BatchSpec, workspace: GitHub) -> Outcome | None:
    """What an earlier attempt of this job published (None: nothing, this attempt publishes)."""
    marker = job.store.marker(job.batch, workspace.remote.full_name)
    if marker is None or marker == job.attempt:
        return None
    head = await workspace.remote.branch_head(spec.branch)
    if head is None:  # the earlier attempt died before its branch was made: publish again
        return None
    job.store.mark_published(job.batch, workspace.remote.full_name, head)
    return Outcome(spec.branch, head, _compare(workspace, spec.branch), adopted=True)


async def adopt(outcome: Outcome, spec: BatchSpec, workspace: GitHub, title: str, body: str) -> Outcome:
    """Take an earlier attempt's published branch as this job's (and open its pull request)."""
    remote = workspace.remote
    remote.work_branch, remote.published_head, remote.overlay = spec.branch, outcome.commit, {}
    if spec.publish == "pr":
        from agent.session.github import open_pr

        outcome.pr_url = (await open_pr(workspace, title, body)).url
    return outcome


async def publish_once(job: JobRef, spec: BatchSpec, workspace: GitHub, title: str,
                       body: str) -> Outcome | None:
    """Publish the job's edits (None: nothing to publish), unless an earlier attempt did."""
    from agent.session.github import open_pr, publish_changes, unpublished

    if not unpublished(workspace):
        return None
    repository = workspace.remote.full_name
    done = await earlier(job, spec, workspace)
    if done is not None:
        return await adopt(done, spec, workspace, title, body)
    marker = job.store.marker(job.batch, repository) or ""
    if not job.store.take_marker(job.batch, repository, job.attempt, dead=marker):
        raise RuntimeError(f"another attempt publishes {repository} for this batch")
    if spec.publish == "pr":
        info = await open_pr(workspace, title, body)
        result = info.published
        commit = result.commit if result is not None else workspace.remote.published_head or ""
        files = [item.path for item in result.files] if result is not None else []
        outcome = Outcome(info.head, commit, _compare(workspace, info.head), files, pr_url=info.url)
    else:
        published = await publish_changes(workspace, title)
        outcome = Outcome(published.branch, published.commit, published.compare_url, list(published.files))
    job.store.mark_published(job.batch, repository, outcome.commit)
    return outcome
