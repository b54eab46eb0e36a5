"""Issues, comments and pull requests against the fake server's records."""

from __future__ import annotations

import pytest

from agent.github.errors import GitHubError, NotFound, TokenRequired
from agent.github.issues import add_issue_comment, get_issue, issue_task, list_issues
from agent.github.issues import open_pull_request as open_pr
from agent.github.publish import ApiPublisher
from agent.github.remote import RemoteRepo
from agent.github.spec import RepoSpec


@pytest.fixture
def repo(gh_server):
    fake = gh_server.create_repo("octo/hello", {"README.md": "# Hello\n"})
    gh_server.add_issue("octo/hello", "Crash on start", "It crashes.\n\nTraceback...", labels=("bug",),
                        comments=("Same here", "Fixed by reverting?"))
    gh_server.add_issue("octo/hello", "Add dark mode", "Please", labels=("enhancement",))
    gh_server.add_issue("octo/hello", "Old bug", "gone", labels=("bug",), state="closed")
    return fake


async def open_pull_request(remote: RemoteRepo, title: str, body: str = "", draft: bool = False):
    return await open_pr(remote, ApiPublisher(remote), title, body, draft)


async def open_remote(make_client, **kwargs) -> RemoteRepo:
    return await RemoteRepo.open(make_client(**kwargs), RepoSpec("octo", "hello"), task="fix crash")


async def test_get_issue_with_comments_becomes_a_task(make_client, repo):
    remote = await open_remote(make_client, token=None)
    issue, comments = await get_issue(remote, 1)
    assert issue.title == "Crash on start" and issue.labels == ["bug"] and issue.comments == 2
    assert [c.body for c in comments] == ["Same here", "Fixed by reverting?"]
    task = issue_task(issue, comments)
    assert task.startswith("Resolve GitHub issue #1: Crash on start\n\nIt crashes.")
    assert "Comment by commenter" in task and task.index("Same here") < task.index("Fixed by reverting?")


async def test_missing_issue(make_client, repo):
    remote = await open_remote(make_client)
    with pytest.raises(NotFound, match="issue #99 not found in octo/hello"):
        await get_issue(remote, 99)


async def test_list_issues_filters_and_skips_pull_requests(gh_server, make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("README.md", "# Fixed\n")
    await open_pull_request(remote, "Fix crash")
    assert [i.number for i in await list_issues(remote)] == [2, 1]
    assert [i.number for i in await list_issues(remote, state="all", labels=["bug"])] == [3, 1]
    assert [i.number for i in await list_issues(remote, state="closed")] == [3]


async def test_list_issues_follows_pagination(gh_server, make_client, repo):
    for n in range(130):
        gh_server.add_issue("octo/hello", f"Issue {n}")
    remote = await open_remote(make_client)
    issues = await list_issues(remote, limit=200)
    assert len(issues) == 132
    assert len(gh_server.calls("GET", r"/issues$")) == 2  # per_page=100


async def test_comment_is_recorded_and_needs_a_token(gh_server, make_client, repo):
    remote = await open_remote(make_client)
    comment = await add_issue_comment(remote, 1, "Working on it.")
    assert comment.author == "alice"
    stored = gh_server.repo("octo/hello").comments[1]
    assert stored[-1]["body"] == "Working on it." and stored[-1]["user"] == "alice"
    anonymous = await open_remote(make_client, token=None)
    with pytest.raises(TokenRequired):
        await add_issue_comment(anonymous, 1, "hi")
    with pytest.raises(GitHubError, match="empty"):
        await add_issue_comment(remote, 1, "  ")
    assert len(gh_server.calls("POST", r"/comments$")) == 1  # refused ones never left


async def test_pull_request_publishes_then_opens_once(gh_server, make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("README.md", "# Fixed\n")
    pr = await open_pull_request(remote, "Fix crash on start", "Closes #1", draft=True)
    assert pr.created and pr.head == "coder-tui/fix-crash" and pr.base == "main" and pr.draft
    assert pr.published is not None and pr.published.commit == remote.published_head
    record = gh_server.repo("octo/hello").pulls[pr.number]
    assert record["head"] == "coder-tui/fix-crash" and record["base"] == "main" and record["draft"]
    assert record["head_sha"] == remote.published_head
    assert remote.pull_request == pr.number
    # more edits: publishing again lands on the same pull request
    await remote.stage("README.md", "# Fixed again\n")
    again = await open_pull_request(remote, "Fix crash on start")
    assert not again.created and again.number == pr.number
    assert len(gh_server.repo("octo/hello").pulls) == 1


async def test_pull_request_without_changes_is_refused(make_client, repo):
    remote = await open_remote(make_client)
    with pytest.raises(GitHubError, match="nothing to propose"):
        await open_pull_request(remote, "Nothing")
