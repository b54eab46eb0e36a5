"""agent/workspace_input/files.py: a file a workspace names is read inside the workspace only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.workspace_input.files import OutsideWorkspace, listing, read_inside
from tests.conftest import write_files


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "outside.md").write_text("outside secret")
    return write_files(tmp_path / "ws", {"docs/prompt.md": "inside", "big.md": "x" * 70_000})


def test_inside_files_and_links_that_stay_inside_are_read(ws: Path) -> None:
    (ws / "AGENTS.md").symlink_to("docs/prompt.md")  # CLAUDE.md -> AGENTS.md style links are common
    assert read_inside(ws, "docs/prompt.md") == "inside" and read_inside(ws, "AGENTS.md") == "inside"
    assert read_inside(ws, "missing.md") is None
    assert read_inside(ws, "big.md", cut=True) == "x" * 65_536


@pytest.mark.parametrize("name, why", [
    ("../outside.md", "climbs out"), ("docs/../../outside.md", "climbs out"), ("/etc/passwd", "absolute"),
    ("~/.ssh/id_rsa", "absolute"), ("", "empty"), ("big.md", "at most 65536"), ("docs", "a folder"),
    ("link.md", "leads out"), ("zero.md", "leads out"), ("fifo.md", "named pipe"),
])
def test_everything_else_is_refused_with_the_reason(ws: Path, name: str, why: str) -> None:
    (ws / "link.md").symlink_to(ws.parent / "outside.md")
    (ws / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(ws / "fifo.md")
    with pytest.raises(OutsideWorkspace, match=why):
        read_inside(ws, name)


def test_a_listed_folder_must_be_inside(ws: Path) -> None:
    assert listing(ws, "docs", ".md") == ["docs/prompt.md"] and listing(ws, "none", ".md") == []
    (ws / "out").symlink_to(ws.parent)
    with pytest.raises(OutsideWorkspace, match="leads out"):
        listing(ws, "out", ".md")
