"""A local folder's facts (two git calls) are read off the event loop: other sessions of
`coder-tui serve` and the app's screen go on while a prompt is built."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

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
