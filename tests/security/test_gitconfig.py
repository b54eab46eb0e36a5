"""A repository's own git config never runs code: fsmonitor, hooks, pager, filters, external diff.

Each planted program appends its name to a marks file. A plain `git status` proves the plants
work; then everything the product does on that repository (workspace facts in a plan-mode run,
the side panel's status, checkpoints and undo, publishing from a clone) must leave the file empty.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import cli, cli_env
from tests.fakellm import FakeLLM, Reply

HOOKS = ("pre-commit", "commit-msg", "post-commit", "post-checkout", "post-index-change", "pre-push",
         "reference-transaction", "prepare-commit-msg", "post-rewrite", "pre-rebase")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _program(folder: Path, name: str, marks: Path) -> str:
    script = folder / name
    script.write_text(f"#!/bin/sh\necho {name} >> '{marks}'\ncat\n")
    script.chmod(0o755)
    return str(script)


def plant(repo: Path, marks: Path, filters: bool = True) -> None:
    """Every code-running setting a hostile repository can carry in .git/.

    `filters=False` for a clone the product made itself: its filter drivers can only come from
    the user's own config (Git LFS), which publishing keeps using.
    """
    bin_dir = repo.parent / f"{repo.name}-programs"
    bin_dir.mkdir()
    git_dir = repo / ".git"
    for hook in HOOKS:
        _program(git_dir / "hooks", hook, marks)
    settings = {"core.fsmonitor": "fsmonitor", "core.pager": "pager", "diff.external": "external-diff",
                "filter.evil.clean": "clean", "filter.evil.smudge": "smudge", "diff.evil.textconv": "textconv",
                "diff.evil.command": "diff-command"}
    for key, name in settings.items():
        if filters or not key.startswith("filter."):
            _git(repo, "config", key, _program(bin_dir, name, marks))
    if filters:
        _git(repo, "config", "filter.evil.required", "true")
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text("* filter=evil diff=evil\n")


def touch(path: Path, stamp: int) -> None:
    """Same size, new mtime: git must read (and filter) the file to know whether it changed."""
    os.utime(path, (stamp, stamp))


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "ws"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    marks = tmp_path / "marks"
    plant(repo, marks)
    return repo, marks


def test_the_plants_run_under_plain_git(hostile: tuple[Path, Path]) -> None:
    repo, marks = hostile
    touch(repo / "a.txt", 1_000_000)
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    ran = marks.read_text().split()
    assert "fsmonitor" in ran and "clean" in ran


def test_plan_mode_run_and_panel_run_nothing(hostile: tuple[Path, Path], fake_llm: FakeLLM,
                                             isolated_home: Path) -> None:
    repo, marks = hostile
    touch(repo / "a.txt", 1_000_000)
    fake_llm.script(Reply(text="Nothing to change."))
    done = subprocess.run(cli("run", "look", "--workspace", str(repo), "--mode", "plan", "--model", fake_llm.model,
                              "--api-base", fake_llm.url, "--api-key", "sk-test-x", "--json"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert "git branch" in system and "git status" in system  # the facts were still gathered
    from tui.widgets.panes import local_info

    touch(repo / "a.txt", 2_000_000)
    info = local_info(str(repo), None)
    assert info.branch and info.changed == 0
    assert not marks.exists(), marks.read_text()


async def test_checkpoints_and_undo_run_nothing(hostile: tuple[Path, Path]) -> None:
    from agent.checkpoints import Checkpoints

    repo, marks = hostile
    checkpoints = Checkpoints(repo)
    first = await checkpoints.create("before")
    (repo / "a.txt").write_text("two\n")
    touch(repo / "a.txt", 3_000_000)
    await checkpoints.create("after")
    await checkpoints.restore(first.id, include_untouched=True)  # a change made outside the agent
    assert (repo / "a.txt").read_text() == "one\n"
    assert not marks.exists(), marks.read_text()


async def test_publishing_from_a_clone_runs_no_hook(tmp_path: Path) -> None:
    from agent.github.clone import ClonePublisher

    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(origin), str(work))
    (work / "a.txt").write_text("one\n")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    _git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
    start = _git(work, "rev-parse", "HEAD").strip()
    marks = tmp_path / "marks"
    plant(work, marks, filters=False)
    (work / "a.txt").write_text("two\n")
    publisher = ClonePublisher(work, "coder-tui/x", start, dict, lambda: ("t", "t@t"))
    result = await publisher.publish("change a")
    assert result.files and _git(origin, "rev-parse", "refs/heads/coder-tui/x").strip() == result.commit
    assert not marks.exists(), marks.read_text()
