"""`coder-tui run --github` publishes what it changed, says where, and announces rate-limit waits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.fakellm import Reply
from tests.github.conftest import READONLY_TOKEN, TOKEN
from tests.github.test_gh_cli import EDIT_TWO, FILES, args, env, everything_written

BRANCH = "coder-tui/be-friendlier"


@pytest.fixture
def repo(gh_server):
    return gh_server.create_repo("octo/hello", FILES)


def events_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_completed_run_publishes_one_commit_and_says_where(fake_llm, gh_server, repo, isolated_home):
    fake_llm.script(EDIT_TWO, Reply(text="Done."))
    done = subprocess.run(args(fake_llm, "--mode", "allow", "--json"), env=env(isolated_home, gh_server),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    published = next(e for e in events if e["type"] == "published")
    head = repo.store.repo.git.rev_parse(f"refs/heads/{BRANCH}")
    assert published["branch"] == BRANCH and published["commit"] == head
    assert published["repository"] == "octo/hello" and sorted(published["files"]) == ["README.md", "src/greet.py"]
    assert published["compare_url"] == f"{gh_server.url}/octo/hello/compare/main...{BRANCH}"
    assert len(repo.store.repo.git.rev_list(f"refs/heads/{BRANCH}", "--not", "refs/heads/main").split()) == 1
    assert repo.store.file_at(BRANCH, "README.md").decode() == "# Hello there\n"
    assert not gh_server.repo("octo/hello").pulls  # a commit on the work branch, no pull request
    assert TOKEN not in done.stdout + done.stderr + everything_written(isolated_home)


def test_readable_mode_prints_where_it_published(fake_llm, gh_server, repo, isolated_home):
    fake_llm.script(EDIT_TWO, Reply(text="Done."))
    done = subprocess.run(args(fake_llm, "--mode", "allow"), env=env(isolated_home, gh_server),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    head = repo.store.repo.git.rev_parse(f"refs/heads/{BRANCH}")
    assert (f"published 2 files to octo/hello branch {BRANCH} as commit {head[:7]}: "
            f"{gh_server.url}/octo/hello/compare/main...{BRANCH}") in done.stderr


def test_no_publish_keeps_the_edits_in_the_session_and_says_so(fake_llm, gh_server, repo, isolated_home):
    fake_llm.script(EDIT_TWO, Reply(text="Done."))
    done = subprocess.run(args(fake_llm, "--mode", "allow", "--json", "--no-publish"),
                          env=env(isolated_home, gh_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    session = events[0]["session_id"]
    assert not [e for e in events if e["type"] == "published"]
    note = [e for e in events if e["type"] == "error"][-1]["message"]
    assert "not published (--no-publish); 2 changed files kept unpublished in session" in note
    assert f"--resume {session}" in note
    assert set(repo.store.refs("refs/heads/")) == {"refs/heads/main"}


def test_a_failed_publish_exits_1_and_keeps_the_edits(fake_llm, gh_server, repo, isolated_home):
    fake_llm.script(EDIT_TWO, Reply(text="Done."))
    done = subprocess.run(args(fake_llm, "--mode", "allow", "--json"),
                          env=env(isolated_home, gh_server, GITHUB_TOKEN=READONLY_TOKEN),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    events = events_of(done.stdout)
    error = [e for e in events if e["type"] == "error"][-1]
    assert error["message"].startswith("publishing failed: ") and "kept unpublished in session" in error["message"]
    assert events[-1]["type"] == "complete" and events[-1]["success"] is False  # agrees with exit code 1
    assert set(repo.store.refs("refs/heads/")) == {"refs/heads/main"}


def test_no_publish_needs_github(fake_llm, isolated_home, tmp_path: Path):
    from tests.conftest import cli, cli_env

    done = subprocess.run(cli("run", "hi", "--workspace", str(tmp_path), "--model", fake_llm.model,
                              "--api-base", fake_llm.url, "--no-publish"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--no-publish needs --github" in done.stderr


@pytest.mark.parametrize("json_mode", [True, False])
def test_a_rate_limit_while_opening_is_announced(fake_llm, gh_server, repo, isolated_home, json_mode):
    fake_llm.script(Reply(text="Nothing to do."))
    gh_server.exhaust_rate_limit(reset_in=2.0)
    done = subprocess.run(args(fake_llm, "--mode", "allow", *(["--json"] if json_mode else [])),
                          env=env(isolated_home, gh_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if json_mode:
        events = events_of(done.stdout)
        waits = [e for e in events if e["type"] == "retrying"]
        assert events.index(waits[0]) < [e["type"] for e in events].index("run_started")
        assert "GitHub rate limit reached while reading octo/hello; it resets at" in waits[0]["why"]
        assert waits[0]["reset_at"] and waits[0]["attempt"] == 1 and 0 < waits[0]["delay"] <= 4
    else:
        assert "… GitHub rate limit reached while reading octo/hello; it resets at" in done.stderr
        assert "retrying in" in done.stderr
