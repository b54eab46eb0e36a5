"""The map of a GitHub repository without a clone: blobs are fetched only to be summarised."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_KEY, cli, cli_env
from tests.github.conftest import TOKEN, gh_server, no_public_github  # noqa: F401 - fixtures
from tests.knowledge.conftest import FILES

BLOBS = r"/git/blobs/"


@pytest.fixture
def repo(gh_server: Any) -> Any:  # noqa: F811
    return gh_server.create_repo("octo/shapes", FILES)


def run_map(home: Path, server: Any, llm: Any, *extra: str) -> dict[str, Any]:
    env = cli_env(home, GITHUB_TOKEN=TOKEN, CODER_TUI_GITHUB_API_URL=server.url)
    done = subprocess.run(cli("map", "--github", "octo/shapes", "--json", "--model", llm.model, "--api-base",
                              llm.url, "--api-key", TEST_KEY, *extra), env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()][-1]


def test_github_map_fetches_no_more_blobs_than_files_summarised(
        gh_server: Any, repo: Any, isolated_home: Path, summary_llm: Any) -> None:  # noqa: F811
    first = run_map(isolated_home, gh_server, summary_llm)
    blobs = len(gh_server.calls("GET", BLOBS))
    assert first["summarised"] == len(FILES) and first["failed"] == {}
    assert 0 < blobs <= first["summarised"]
    assert not list(isolated_home.rglob("*.git"))  # nothing was cloned
    again = run_map(isolated_home, gh_server, summary_llm)
    assert again["summarised"] == 0 and len(gh_server.calls("GET", BLOBS)) == blobs
    repo.store.commit_files("main", {"web/format.ts": "export const formatArea = (a: number) => `${a}`;\n",
                                     "engine/lib.rs": None}, "Change one, delete one")
    third = run_map(isolated_home, gh_server, summary_llm)
    assert third["changed"] == 1 and third["removed"] == 1 and third["summarised"] == 1
    assert len(gh_server.calls("GET", BLOBS)) == blobs + 1
    assert len(summary_llm.requests) == len(FILES) + 1


async def test_github_map_without_summaries_lists_everything_and_the_tool_answers(
        gh_server: Any, repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from agent.config import Config
    from agent.session.github import GitHubRequest, open_github
    from agent.knowledge.builder import current_view

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    opened = await open_github(GitHubRequest("octo/shapes"), Config(), settings={"write_interval": 0.0})
    try:
        view = await current_view(opened.workspace)
    finally:
        await opened.workspace.close()
    assert sorted(view.records) == sorted(FILES) and gh_server.calls("GET", BLOBS) == []
    assert "web/app.ts" in view.outline("web")


def test_map_waits_out_a_rate_limit_while_opening_the_repository_and_says_so(
        gh_server: Any, repo: Any, isolated_home: Path) -> None:  # noqa: F811
    gh_server.exhaust_rate_limit(reset_in=1.0)
    env = cli_env(isolated_home, GITHUB_TOKEN=TOKEN, CODER_TUI_GITHUB_API_URL=gh_server.url)
    done = subprocess.run(cli("map", "--github", "octo/shapes", "--no-summaries"), env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "GitHub rate limit reached while reading octo/shapes; it resets at" in done.stderr
    assert "(waiting " in done.stderr and f"Mapped {len(FILES)} file(s)" in done.stdout


async def test_explore_waits_out_the_github_rate_limit_and_says_so(
        gh_server: Any, repo: Any, monkeypatch: pytest.MonkeyPatch, summary_llm: Any) -> None:  # noqa: F811
    from agent.config import Config
    from agent.session.github import GitHubRequest, open_github
    from agent.knowledge.explore import Explorer
    from tests.knowledge.test_map_build import llm_for

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    opened = await open_github(GitHubRequest("octo/shapes"), Config(),
                               settings={"write_interval": 0.0, "max_rate_wait": 0.0})
    seen: list[Any] = []
    explorer = Explorer(opened.workspace, llm_for(summary_llm), seen.append)
    gh_server.exhaust_rate_limit(reset_in=1.5)
    try:
        why = await asyncio.wait_for(explorer.run(0, until_done=True), 60)
        status = explorer.status()
    finally:
        explorer.close()
        await opened.workspace.close()
    waits = [e for e in seen if e.type == "explore_wait"]
    assert why == "everything is current" and waits
    assert "GitHub rate limit reached; waiting until" in waits[0].text
    assert status["summarised"] == len(FILES)


def test_clone_map_shares_the_repository_store_and_reads_files_locally(
        gh_server: Any, repo: Any, isolated_home: Path, summary_llm: Any) -> None:  # noqa: F811
    cloned = run_map(isolated_home, gh_server, summary_llm, "--clone")
    assert cloned["summarised"] == len(FILES) and gh_server.calls("GET", BLOBS) == []
    # the API workspace of the same repository finds every summary already there
    api = run_map(isolated_home, gh_server, summary_llm)
    assert api["summarised"] == 0 and gh_server.calls("GET", BLOBS) == []
    assert cloned["store"] == api["store"] and len(summary_llm.requests) == len(FILES)


def test_a_due_task_on_github_runs_with_the_github_tools(
        gh_server: Any, repo: Any, isolated_home: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from agent.knowledge.store import repo_key
    from agent.knowledge.tasks import TaskStore
    from tests.fakellm import Reply, call

    monkeypatch.setenv("XDG_DATA_HOME", str(isolated_home / "data"))
    store = TaskStore(repo_key("github:octo/shapes"), "github:octo/shapes")
    task = store.schedule("add a changelog", delay_seconds=0)
    store.close()
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="CHANGELOG.md", content="# Changes\n")]),
                    Reply(tool_calls=[call("create_pull_request", title="Add a changelog")]), Reply(text="Opened."))
    env = cli_env(isolated_home, GITHUB_TOKEN=TOKEN, CODER_TUI_GITHUB_API_URL=gh_server.url)
    done = subprocess.run(cli("tasks", "run-due", "--github", "octo/shapes", "--mode", "allow", "--json",
                              "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY),
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    finished = [json.loads(line) for line in done.stdout.splitlines() if '"task_finished"' in line]
    assert [(t["id"], t["status"]) for t in finished] == [(task.id, "completed")]
    fake = gh_server.repo("octo/shapes")
    assert fake.issues[1]["title"] == "Add a changelog" and fake.pulls[1]["base"] == "main"
    assert "CHANGELOG.md" in fake.store.repo.git.ls_tree("-r", "--name-only", fake.pulls[1]["head_sha"])
