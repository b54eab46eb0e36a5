"""`coder-tui run --resume ID` of a session recorded on GitHub, without `--github`: it reopens the
repository it was recorded on (not the local folder, where its files do not exist), and says so
in one line when no GitHub token is there to do it. Subprocesses, the fake model and fake GitHub."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

from tests.conftest import cli, cli_env
from tests.fakellm import FakeLLM, Reply, call
from tests.github.test_gh_cli import EDIT_TWO, args, env, repo  # noqa: F401 - repo is a fixture


def recorded_session(fake_llm: FakeLLM, gh_server, home: Path) -> str:
    """A session that changed octo/hello through the API (its work branch published)."""
    fake_llm.script(EDIT_TWO, Reply(text="Done."))
    done = subprocess.run(args(fake_llm, "--mode", "allow", "--json"), env=env(home, gh_server),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return next(json.loads(line)["session_id"] for line in done.stdout.splitlines()
                if json.loads(line)["type"] == "run_started")


def resume(fake_llm: FakeLLM, session_id: str, where: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    where.mkdir(exist_ok=True)  # a local folder without the repository's files
    command = cli("run", "what does the README say now?", "--resume", session_id, "--model", fake_llm.model,
                  "--api-base", fake_llm.url, "--api-key", "sk-test-cli-secret-0000000", "--mode", "allow", "--json")
    return subprocess.run(command, env=environ, cwd=where, capture_output=True, text=True, timeout=120)


def test_resuming_a_github_session_without_github_reopens_its_repository(fake_llm, gh_server, repo, isolated_home,
                                                                         tmp_path):
    session_id = recorded_session(fake_llm, gh_server, isolated_home)
    fake_llm.script(Reply(tool_calls=[call("read_file", file_path="README.md")]), Reply(text="It says hello there."))
    done = resume(fake_llm, session_id, tmp_path / "elsewhere", env(isolated_home, gh_server))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["type"] == "run_started" and events[0]["workspace"] == "github:octo/hello"
    read = next(e for e in events if e["type"] == "tool_result")
    assert read["ok"] is True, read
    tool_message = [m for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert "# Hello there" in str(tool_message["content"])  # the session's own version of the file
    assert "be friendlier" in json.dumps(fake_llm.requests[-1]["messages"])  # the recorded conversation goes on


def test_resuming_it_without_a_github_token_says_so_in_one_line(fake_llm, gh_server, repo, isolated_home, tmp_path):
    session_id = recorded_session(fake_llm, gh_server, isolated_home)
    asked = len(fake_llm.requests)
    no_token = cli_env(isolated_home, CODER_TUI_GITHUB_API_URL=gh_server.url, PATH="/usr/bin:/bin")  # no gh CLI
    done = resume(fake_llm, session_id, tmp_path / "elsewhere", no_token)
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip()
    assert len(said.splitlines()) == 1 and "Traceback" not in said, said
    assert f"session {session_id} was recorded on github:octo/hello" in said and "needs a GitHub token" in said
    assert "GITHUB_TOKEN" in said
    assert len(fake_llm.requests) == asked  # nothing ran on the local folder


async def test_the_app_opening_a_local_folder_without_a_config_gets_the_recorded_repository(
        fake_llm, gh_server, repo, isolated_home, monkeypatch):
    from agent.session.target import TargetSpec, open_target
    from tests.github.conftest import TOKEN

    session_id = recorded_session(fake_llm, gh_server, isolated_home)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    spec = TargetSpec.from_options(SimpleNamespace(resume=session_id[:15]))  # as the app reads `--resume ID`
    assert (spec.github, spec.clone, spec.recorded) == ("octo/hello", False, True)
    target = await open_target(spec, None)  # the app's local opener passes no config
    try:
        assert target.label == "github:octo/hello"
        assert await target.workspace.read_text("README.md") == "# Hello there\n"
    finally:
        await target.close()
