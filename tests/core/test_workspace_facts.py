"""A local folder's facts (two git calls) are read off the event loop: other sessions of
`coder-tui serve` and the app's screen go on while a prompt is built."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from agent import gitsafe
from agent.workspaces.local import LocalWorkspace


class RecordingWorkspace(LocalWorkspace):
    """A real folder workspace that notes which thread read its facts."""

    threads: list[int]

    def facts(self) -> dict[str, str]:
        self.threads.append(threading.get_ident())
        return super().facts()


def _git_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.py").write_text("x = 1\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    return root


async def test_a_folders_facts_are_read_in_a_thread_with_the_same_content(tmp_path: Path) -> None:
    workspace = RecordingWorkspace(_git_folder(tmp_path / "ws"))
    workspace.threads = []
    facts = await workspace.read_facts()
    assert facts == workspace.facts()
    assert facts["git status"] == "1 changed file(s)"
    assert workspace.threads[0] != threading.get_ident()


async def test_the_system_prompt_reads_the_facts_off_the_loop(make_harness: Any, tmp_path: Path) -> None:
    harness = make_harness(root=_git_folder(tmp_path / "ws"))
    workspace = RecordingWorkspace(harness.root)
    workspace.threads = []
    harness.session.workspace = workspace
    prompt = await harness.session.system_prompt()
    assert f"- workspace: {harness.root}" in prompt and "- git status: 1 changed file(s)" in prompt
    assert workspace.threads and threading.get_ident() not in workspace.threads


def _logging_git(folder: Path, log: Path) -> str:
    """A PATH whose first `git` notes each call in `log`, then runs the real git."""
    real = shutil.which("git")
    assert real is not None
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


def test_a_folder_outside_any_repository_starts_no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The facts of a plain folder are read from the file system: no git process on a cold run."""
    log = tmp_path / "git-calls"
    monkeypatch.setenv("PATH", _logging_git(tmp_path / "bin", log))
    for name in gitsafe.GIT_LOCATION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    plain = tmp_path / "plain" / "deeper"
    plain.mkdir(parents=True)
    assert LocalWorkspace(plain).facts() == {"workspace": str(plain), "kind": "local folder",
                                             "git": "not a git repository"}
    assert not log.exists()
    repo = _git_folder(tmp_path / "repo")
    (repo / "sub").mkdir()
    log.unlink(missing_ok=True)
    facts = LocalWorkspace(repo / "sub").facts()  # a folder inside a repository still asks git
    assert facts["git branch"] in ("master", "main") and "status" in log.read_text()


def test_what_makes_git_look_at_a_folder_is_left_to_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in gitsafe.GIT_LOCATION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert gitsafe.outside_repository(plain)
    (tmp_path / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's or submodule's .git file, above
    assert not gitsafe.outside_repository(plain)
    (tmp_path / ".git").unlink()
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert not gitsafe.outside_repository(bare)
    monkeypatch.setenv("GIT_DIR", str(bare))
    assert not gitsafe.outside_repository(plain)


def test_a_repositorys_facts_take_one_status_and_name_the_branch_as_rev_parse_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Branch and changes from one `git status --branch` (and the config read that makes it safe):
    no `rev-parse` process on the way to the first request; the branch as rev-parse names it."""
    log = tmp_path / "git-calls"
    repo = _git_folder(tmp_path / "repo")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "feature/x"], check=True)
    (repo / "b.py").write_text("y = 2\n")
    monkeypatch.setenv("PATH", _logging_git(tmp_path / "bin", log))
    for name in gitsafe.GIT_LOCATION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    facts = LocalWorkspace(repo).facts()
    assert facts["git branch"] == "feature/x" and facts["git status"] == "2 changed file(s)"
    calls = log.read_text().splitlines()
    assert len(calls) == 2 and not any("rev-parse" in call for call in calls), calls
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach"], check=True)
    assert LocalWorkspace(repo).facts()["git branch"] == "HEAD"  # what rev-parse --abbrev-ref says
    empty = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    assert LocalWorkspace(empty).facts()["git"] == "not a git repository"  # no commit: as before
