"""OverlayWorkspace over a real folder: reads see the overlay first, edits stay in memory."""

from __future__ import annotations

import re

import pytest

from agent.diffing import FileChange
from agent.workspaces.base import ConflictError
from agent.workspaces.local import LocalWorkspace
from agent.workspaces.overlay import OverlayWorkspace
from tests.conftest import write_files


@pytest.fixture
def overlay(tmp_path):
    root = write_files(tmp_path / "ws", {"a.py": "disk a\n", "pkg/b.py": "disk b\n", "pkg/c.py": "disk c\n"})
    return OverlayWorkspace(LocalWorkspace(root), {"pkg/b.py": "buffer b\n", "new/d.py": "buffer d\n"})


async def test_reads_and_listings_see_the_overlay_first(overlay):
    assert await overlay.read_text("pkg/b.py") == "buffer b\n"
    assert await overlay.read_text("a.py") == "disk a\n"
    assert await overlay.exists("new") and await overlay.is_dir("new") and not await overlay.is_dir("new/d.py")
    assert [(e.name, e.is_dir) for e in await overlay.list_dir("")] == [("new", True), ("pkg", True), ("a.py", False)]
    assert [(e.name, e.size) for e in await overlay.list_dir("pkg")] == [("b.py", 9), ("c.py", 7)]
    assert await overlay.list_files() == ["a.py", "new/d.py", "pkg/b.py", "pkg/c.py"]
    hits = (await overlay.search(re.compile("buffer|disk"))).hits
    assert sorted((h.path, h.text) for h in hits) == [("a.py", "disk a"), ("new/d.py", "buffer d"),
                                                       ("pkg/b.py", "buffer b"), ("pkg/c.py", "disk c")]


async def test_edits_stay_in_memory_all_or_nothing(overlay):
    root = overlay.root
    await overlay.apply([FileChange("a.py", "disk a\n", "edited a\n"), FileChange("e.py", None, "new e\n")])
    assert await overlay.read_text("a.py") == "edited a\n" and await overlay.read_text("e.py") == "new e\n"
    assert (root / "a.py").read_text() == "disk a\n" and not (root / "e.py").exists()
    with pytest.raises(ConflictError):  # a stale base anywhere: nothing of the change applies
        await overlay.apply([FileChange("pkg/c.py", "disk c\n", "x\n"), FileChange("a.py", "disk a\n", "y\n")])
    assert await overlay.read_text("pkg/c.py") == "disk c\n"
    assert overlay.changed == {"pkg/b.py": "buffer b\n", "new/d.py": "buffer d\n", "a.py": "edited a\n",
                               "e.py": "new e\n"}


def test_it_runs_no_commands_and_makes_no_checkpoints(overlay):
    assert not overlay.can_exec and not overlay.can_checkpoint
    assert "editor" in overlay.exec_unavailable_reason and overlay.kind == "overlay"
