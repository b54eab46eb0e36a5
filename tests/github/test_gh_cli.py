"""`coder-tui run --github` as users run it: subprocesses against the fake model and fake GitHub."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, cli_env
from tests.fakellm import FakeLLM, Reply, call
from tests.github.conftest import TOKEN

FILES = {"README.md": "# Hello\n", "src/greet.py": "def greet(name):\n    return 'Hello ' + name\n"}
EDIT_TWO = Reply(tool_calls=[
    call("patch_file", file_path="src/greet.py", patches=[{"old_text": "'Hello '", "new_text": "'Hi '"}]),
    call("write_file", file_path="README.md", content="# Hello there\n"),
])
PR = Reply(tool_calls=[call("create_pull_request", title="Friendlier", body="Body")])


@pytest.fixture
def repo(gh_server):
    return gh_server.create_repo("octo/hello", FILES)


def env(home: Path, server: Any, **extra: str) -> dict[str, str]:
    return cli_env(home, **{"GITHUB_TOKEN": TOKEN, "CODER_TUI_GITHUB_API_URL": server.url, **extra})


def args(llm: FakeLLM, *extra: str, prompt: str = "be friendlier") -> list[str]:
    return cli("run", prompt, "--github", "octo/hello", "--model", llm.model, "--api-base", llm.url,
               "--api-key", "sk-test-cli-secret-0000000", *extra)


def everything_written(home: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())


def test_headless_run_publishes_one_commit_and_opens_a_pull_request(fake_llm, gh_server, repo, isolated_home):
    fake_llm.script(EDIT_TWO, PR, Reply(text="Done."))
    done = subprocess.run(args(fake_llm, "--mode", "allow", "--json"), env=env(isolated_home, gh_server),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["workspace"] == "github:octo/hello"
    branch = "coder-tui/be-friendlier"
    log = repo.store.repo.git.rev_list(f"refs/heads/{branch}", "--not", "refs/heads/main").split()
    assert len(log) == 1
    assert set(repo.store.repo.git.diff("--name-only", "main", branch).split()) == {"README.md", "src/greet.py"}
    assert gh_server.repo("octo/hello").pulls[1]["head"] == branch
    assert TOKEN not in done.stdout + done.stderr + everything_written(isolated_home)


def test_crash_then_resume_publishes_the_unpublished_edits(fake_llm, gh_server, repo, isolated_home):
    fake_llm.script(EDIT_TWO, Reply(text="thinking", stall_after=1))
    proc = subprocess.Popen(args(fake_llm, "--mode", "allow", "--json"), env=env(isolated_home, gh_server),
                            text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    changed = 0
    for line in proc.stdout:
        changed += json.loads(line)["type"] == "file_changed"
        if changed == 2:
            break
    deadline = time.monotonic() + 30
    while len(fake_llm.requests) < 2 and time.monotonic() < deadline:  # the model is "thinking"
        time.sleep(0.02)
    assert fake_llm.remaining == 0
    proc.kill()  # a crash: no clean shutdown, nothing published
    proc.wait(30)
    assert set(repo.store.refs("refs/heads/")) == {"refs/heads/main"}

    fake_llm.script(PR, Reply(text="Published."))
    done = subprocess.run(args(fake_llm, "--mode", "allow", "--json", "--resume", "last", prompt="publish it"),
                          env=env(isolated_home, gh_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    branch = "coder-tui/be-friendlier"
    assert set(repo.store.repo.git.diff("--name-only", "main", branch).split()) == {"README.md", "src/greet.py"}
    assert len(repo.store.repo.git.rev_list(f"refs/heads/{branch}", "--not", "refs/heads/main").split()) == 1
    assert TOKEN not in done.stdout + done.stderr + everything_written(isolated_home)


def test_issue_flag_makes_the_task(fake_llm, gh_server, repo, isolated_home):
    gh_server.add_issue("octo/hello", "Rude greeting", "Please say hi.", comments=("+1",))
    fake_llm.script(Reply(text="I will."))
    done = subprocess.run(cli("run", "--github", "octo/hello", "--issue", "1", "--model", fake_llm.model,
                              "--api-base", fake_llm.url, "--api-key", "sk-test-cli-secret-0000000", "--json"),
                          env=env(isolated_home, gh_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    user = [m for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"][0]["content"]
    assert user.startswith("Resolve GitHub issue #1: Rude greeting") and "+1" in user


@pytest.mark.parametrize(("extra", "message"), [
    (["--github", "not a repo"], "--github: 'not a repo' is not a repository"),
    (["--github", "octo/missing"], "--github: repository octo/missing not found on GitHub"),
    (["--github", "octo/hello@nope"], "'nope' is not a branch, tag or commit of octo/hello"),
    (["--github", "octo/hello", "--issue", "99"], "issue #99 not found in octo/hello"),
    (["--clone"], "--clone and --issue need --github OWNER/REPO"),
])
def test_bad_input_exits_2_with_one_line(fake_llm, gh_server, repo, isolated_home, extra, message):
    command = cli("run", "hi", "--model", fake_llm.model, "--api-base", fake_llm.url, *extra)
    done = subprocess.run(command, env=env(isolated_home, gh_server), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_bad_token_is_reported_without_showing_it(fake_llm, gh_server, repo, isolated_home):
    bad = "ghp_" + "x" * 36
    command = cli("run", "hi", "--github", "octo/hello", "--model", fake_llm.model, "--api-base", fake_llm.url)
    done = subprocess.run(command, env=env(isolated_home, gh_server, GITHUB_TOKEN=bad),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "401 Bad credentials" in done.stderr and "token from GITHUB_TOKEN" in done.stderr
    assert bad not in done.stderr + done.stdout


def test_clone_headless_shows_progress_and_pushes(fake_llm, gh_server, repo, isolated_home):
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="sed -i s/Hello/Hi/ src/greet.py")]), PR,
                    Reply(text="Done."))
    done = subprocess.run(args(fake_llm, "--clone", "--mode", "allow", prompt="clone and fix"),
                          env=env(isolated_home, gh_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "receiving objects" in done.stderr
    branch = "coder-tui/clone-and-fix"
    assert repo.store.file_at(branch, "src/greet.py").decode() == "def greet(name):\n    return 'Hi ' + name\n"
    assert gh_server.repo("octo/hello").pulls[1]["head"] == branch
    assert TOKEN not in done.stdout + done.stderr + everything_written(isolated_home)
