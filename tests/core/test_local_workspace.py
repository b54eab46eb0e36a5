"""The local workspace: confinement, .gitignore, atomic writes that keep a file's conventions."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from agent.diffing import FileChange
from agent.workspaces import localwrite
from agent.workspaces.base import ConflictError, WorkspaceError
from agent.workspaces.local import LocalWorkspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print('a')\n")
    (tmp_path / "outside.txt").write_text("secret outside\n")
    return ws


@pytest.mark.parametrize("path", ["../outside.txt", "src/../../outside.txt", "/etc/passwd"])
async def test_paths_leaving_the_root_are_refused(root: Path, path: str) -> None:
    ws = LocalWorkspace(root)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        await ws.read_text(path)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        await ws.apply([FileChange(path, None, "x\n")])


async def test_symlinks_pointing_out_are_refused_for_reads_and_writes(root: Path) -> None:
    (root / "link.txt").symlink_to(root.parent / "outside.txt")
    (root / "linkdir").symlink_to(root.parent)
    ws = LocalWorkspace(root)
    for path in ("link.txt", "linkdir/outside.txt"):
        with pytest.raises(WorkspaceError, match="points outside"):
            await ws.read_text(path)
    with pytest.raises(WorkspaceError, match="points outside"):
        await ws.apply([FileChange("link.txt", "secret outside\n", "overwritten\n")])
    assert (root.parent / "outside.txt").read_text() == "secret outside\n"


async def test_absolute_paths_inside_the_root_and_inner_symlinks_work(root: Path) -> None:
    (root / "alias.py").symlink_to(root / "src" / "a.py")
    ws = LocalWorkspace(root)
    assert await ws.read_text(str(root / "src" / "a.py")) == "print('a')\n"
    assert ws.normalize(str(root / "src" / "a.py")) == "src/a.py"
    await ws.apply([FileChange("alias.py", "print('a')\n", "print('b')\n")])
    assert (root / "src" / "a.py").read_text() == "print('b')\n"
    assert (root / "alias.py").is_symlink()


async def test_writes_under_dot_git_are_refused(root: Path) -> None:
    (root / ".git").mkdir()
    ws = LocalWorkspace(root)
    with pytest.raises(WorkspaceError, match=r"\.git"):
        await ws.apply([FileChange(".git/config", None, "[core]\n")])
    assert not (root / ".git" / "config").exists()


async def test_listing_and_search_honour_nested_gitignore(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle\n")
    (root / "debug.log").write_text("needle\n")
    (root / "keep.log").write_text("needle\n")
    (root / "src" / ".gitignore").write_text("generated.py\n")
    (root / "src" / "generated.py").write_text("needle\n")
    (root / "src" / "real.py").write_text("x = 1\nneedle = 2\n")
    ws = LocalWorkspace(root)
    files = await ws.list_files()
    assert sorted(files) == [".gitignore", "keep.log", "src/.gitignore", "src/a.py", "src/real.py"]
    names = [e.name for e in await ws.list_dir("")]
    assert "build" not in names and "debug.log" not in names and "keep.log" in names
    result = await ws.search(re.compile("needle"))
    assert sorted((h.path, h.line) for h in result.hits) == [("keep.log", 1), ("src/real.py", 2)]


async def test_write_keeps_crlf_bom_latin1_and_mode(root: Path) -> None:
    crlf = root / "win.txt"
    crlf.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    latin = root / "latin.txt"
    latin.write_bytes("caf\xe9\n".encode("latin-1"))
    script = root / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    ws = LocalWorkspace(root)
    assert await ws.read_text("win.txt") == "one\ntwo\n"
    await ws.apply([
        FileChange("win.txt", "one\ntwo\n", "one\n2\nthree\n"),
        FileChange("latin.txt", "café\n", "café au lait\n"),
        FileChange("run.sh", "#!/bin/sh\necho hi\n", "#!/bin/sh\necho bye\n"),
    ])
    assert crlf.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\nthree\r\n"
    assert latin.read_bytes() == "café au lait\n".encode("latin-1")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_binary_files_are_refused(root: Path) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    ws = LocalWorkspace(root)
    with pytest.raises(WorkspaceError, match="binary"):
        await ws.read_text("img.png")


async def test_stale_base_is_a_conflict_and_changes_nothing(root: Path) -> None:
    ws = LocalWorkspace(root)
    (root / "b.py").write_text("b\n")
    with pytest.raises(ConflictError):
        await ws.apply([FileChange("b.py", "b\n", "B\n"), FileChange("src/a.py", "not what is there\n", "x\n")])
    assert (root / "b.py").read_text() == "b\n"
    assert sorted(p.name for p in root.iterdir()) == ["b.py", "src"]  # no temp files left


async def test_multi_file_write_rolls_back_when_a_rename_fails(root: Path) -> None:
    ws = LocalWorkspace(root)
    (root / "b.py").write_text("b\n")
    locked = root / "locked"
    locked.mkdir()
    (locked / "c.py").write_text("c\n")
    changes = [FileChange("b.py", "b\n", "B\n"), FileChange("locked/c.py", "c\n", "C\n")]
    staged = [localwrite.stage(ws.root, ws._writable(c.path), c) for c in changes]
    os.chmod(locked, 0o500)  # the second rename now fails (unless running as root)
    try:
        if os.geteuid() == 0:  # root ignores permissions: make the rename fail another way
            os.unlink(staged[1].temp, dir_fd=staged[1].dir_fd)
        with pytest.raises(WorkspaceError, match="nothing was changed"):
            localwrite.commit(staged)
    finally:
        os.chmod(locked, 0o700)
        for item in staged:
            item.close()
    assert (root / "b.py").read_text() == "b\n"
    assert (locked / "c.py").read_text() == "c\n"


async def test_missing_or_file_root_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        LocalWorkspace(tmp_path / "nope")
    (tmp_path / "f").write_text("")
    with pytest.raises(WorkspaceError, match="not a folder"):
        LocalWorkspace(tmp_path / "f")
