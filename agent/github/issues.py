"""Issues, issue comments and pull requests of the repository being worked on."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal

from agent.github.errors import GitHubError, NotFound
from agent.github.publish import Publisher, PublishResult
from agent.github.remote import RemoteRepo

IssueState = Literal["open", "closed", "all"]


@dataclass(frozen=True)
class IssueComment:
    author: str
    body: str
    created_at: str
    url: str = ""


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    state: str
    labels: list[str]
    author: str
    url: str
    comments: int
    is_pull: bool = False


@dataclass(frozen=True)
class PullRequestInfo:
    number: int
    url: str
    head: str
    base: str
    draft: bool
    created: bool  # False: one was already open for the work branch
    published: PublishResult | None = None


def _issue(raw: Any) -> Issue:
    return Issue(
        number=raw.number, title=raw.title or "", body=raw.body or "", state=raw.state or "",
        labels=[label.name for label in raw.labels], author=raw.user.login if raw.user else "",
        url=raw.html_url or "", comments=raw.comments or 0, is_pull=raw.pull_request is not None,
    )


def _comment(raw: Any) -> IssueComment:
    stamp = raw.created_at.strftime("%Y-%m-%d %H:%M") if raw.created_at else ""
    return IssueComment(raw.user.login if raw.user else "", raw.body or "", stamp, raw.html_url or "")


async def get_issue(remote: RemoteRepo, number: int) -> tuple[Issue, list[IssueComment]]:
    """An issue (or pull request) with all its comments."""
    missing = NotFound(f"issue #{number} not found in {remote.full_name}")

    def fetch() -> tuple[Issue, list[IssueComment]]:
        raw = remote.api.get_issue(number)
        return _issue(raw), [_comment(c) for c in raw.get_comments()]

    return await remote.client.call(f"reading issue #{number}", fetch, missing=missing)


async def list_issues(
    remote: RemoteRepo, state: IssueState = "open", labels: list[str] | None = None, limit: int = 30
) -> list[Issue]:
    """Issues, newest first, without pull requests (GitHub lists both together)."""

    def fetch() -> list[Issue]:
        listing = remote.api.get_issues(state=state, labels=list(labels or []))
        issues = (_issue(raw) for raw in listing)
        return list(itertools.islice((i for i in issues if not i.is_pull), limit))

    return await remote.client.call(f"listing issues of {remote.full_name}", fetch)


async def add_issue_comment(remote: RemoteRepo, number: int, body: str) -> IssueComment:
    if not body.strip():
        raise GitHubError("the comment is empty")
    missing = NotFound(f"issue #{number} not found in {remote.full_name}")

    def post() -> IssueComment:
        return _comment(remote.api.get_issue(number).create_comment(body))

    return await remote.client.call(f"commenting on issue #{number}", post, write=True, missing=missing)


async def open_pull_request(remote: RemoteRepo, publisher: Publisher, title: str, body: str = "",
                            draft: bool = False) -> PullRequestInfo:
    """Publish any unpublished work, then open a pull request from the work branch (or find the open one)."""
    if not title.strip():
        raise GitHubError("a pull request needs a title")
    remote.client.require_token(f"opening a pull request on {remote.full_name}")
    published = await publisher.publish(title) if publisher.has_unpublished() else None
    if not publisher.has_published():
        raise GitHubError("nothing to propose: no change has been made or published yet")
    head, base = publisher.branch, remote.pr_base
    owner = remote.full_name.split("/")[0]

    def find_or_create() -> tuple[Any, bool]:
        api = remote.api
        existing = list(itertools.islice(api.get_pulls(state="open", head=f"{owner}:{head}", base=base), 1))
        if existing:
            return existing[0], False
        return api.create_pull(title=title, body=body, head=head, base=base, draft=draft), True

    raw, created = await remote.client.call(f"opening a pull request from {head} into {base}", find_or_create,
                                            write=True)
    remote.pull_request = raw.number
    return PullRequestInfo(raw.number, raw.html_url, head, base, bool(raw.draft), created, published)


def issue_task(issue: Issue, comments: list[IssueComment]) -> str:
    """The task text for `--issue N`: title, body and the discussion, in order."""
    parts = [f"Resolve GitHub issue #{issue.number}: {issue.title}", "", issue.body.strip() or "(no description)"]
    if issue.labels:
        parts += ["", "Labels: " + ", ".join(issue.labels)]
    for comment in comments:
        parts += ["", f"Comment by {comment.author} ({comment.created_at}):", comment.body.strip()]
    return "\n".join(parts)
