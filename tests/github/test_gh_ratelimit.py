"""Rate limits: wait and say so when the reset is near, stop with the reset time when it is not."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from agent.events import Retrying
from agent.github.errors import GitHubError, RateLimited
from agent.github.remote import RemoteRepo
from agent.github.spec import RepoSpec


@pytest.fixture
def repo(gh_server):
    return gh_server.create_repo("octo/hello", {"README.md": "# Hello\n"})


async def test_every_answer_reports_the_limit(gh_server, make_client, repo):
    client = make_client()
    assert client.rate() is None
    await RemoteRepo.open(client, RepoSpec("octo", "hello"))
    rate = client.rate()
    assert rate is not None and rate.limit == 5000
    assert rate.remaining == 5000 - len(gh_server.requests)


async def test_near_reset_waits_and_says_so(gh_server, make_client, repo):
    told: list[Retrying] = []
    client = make_client()
    client.notify = told.append
    gh_server.exhaust_rate_limit(reset_in=1.0)
    started = time.monotonic()
    remote = await RemoteRepo.open(client, RepoSpec("octo", "hello"))
    assert await remote.read_text("README.md") == "# Hello\n"
    assert told and "GitHub rate limit reached while reading octo/hello; it resets at" in told[0].why
    assert 0 < told[0].delay <= 3 and told[0].attempt == 1
    reset = dt.datetime.fromisoformat(told[0].reset_at)
    assert started - 1 < reset.timestamp() < time.time() + 5
    assert time.monotonic() - started >= 0.5


async def test_far_reset_stops_with_the_reset_time(gh_server, make_client, repo):
    gh_server.exhaust_rate_limit(reset_in=3600)
    with pytest.raises(RateLimited) as info:
        await RemoteRepo.open(make_client(max_rate_wait=5), RepoSpec("octo", "hello"))
    assert "rate limit exhausted while reading octo/hello; it resets at" in str(info.value)
    assert "in about 60 min" in str(info.value)
    assert info.value.reset_at.timestamp() > time.time() + 3000


async def test_anonymous_limit_suggests_a_token(gh_server, make_client, repo):
    gh_server.limits["anonymous"] = 5
    client = make_client(token=None, max_rate_wait=0)
    remote = await RemoteRepo.open(client, RepoSpec("octo", "hello"))  # repo, ref, commit, tree, work branch
    with pytest.raises(RateLimited, match="Without a token the limit is 60 requests an hour"):
        await remote.read_text("README.md")


async def test_secondary_limit_honours_retry_after(gh_server, make_client, repo):
    told: list[float] = []
    client = make_client()
    client.notify = lambda event: told.append(event.delay)
    gh_server.inject("GET", r"^/repos/octo/hello$", 403,
                     "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                     headers={"Retry-After": "1"})
    await RemoteRepo.open(client, RepoSpec("octo", "hello"))
    assert told == [1.0]


async def test_429_and_server_errors(gh_server, make_client, repo):
    client = make_client(max_rate_wait=0)
    gh_server.inject("GET", r"^/repos/octo/hello$", 429, "Too many requests", headers={"Retry-After": "120"})
    with pytest.raises(RateLimited, match="in about 2 min"):
        await RemoteRepo.open(client, RepoSpec("octo", "hello"))
    gh_server.inject("GET", r"^/repos/octo/hello$", 500, "Server Error", times=10)
    with pytest.raises(GitHubError, match="GitHub answered 500 while reading octo/hello: Server Error; try again later"):
        await RemoteRepo.open(client, RepoSpec("octo", "hello"))


async def test_transient_server_error_on_a_read_is_retried(gh_server, make_client, repo):
    gh_server.inject("GET", r"^/repos/octo/hello$", 502, "Bad Gateway", times=1)
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"))
    assert remote.default_branch == "main"


async def test_waits_during_a_run_are_events_with_their_attempt(make_gh_session, gh_server, repo):
    """A wait inside a tool (here a search fetching files) reaches the session's event stream."""
    from tests.fakellm import Reply, call

    harness = await make_gh_session()
    harness.script(Reply(tool_calls=[call("search_code", pattern="Hello")]), Reply(text="Found it."))
    gh_server.inject("GET", r"/git/blobs/", 403, "API rate limit exceeded for user ID 1.",
                     headers={"Retry-After": "1", "X-RateLimit-Remaining": "0"}, times=2)
    await harness.run()
    waits = harness.of("retrying")
    assert [w.attempt for w in waits] == [1, 2]
    assert all(w.reset_at and "while reading blob" in w.why for w in waits)
    assert harness.tool_results()[0].ok
