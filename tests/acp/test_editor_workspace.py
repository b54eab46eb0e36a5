"""EditorWorkspace: a folder whose file text comes from an editor's buffers (here a dict of them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.diffing import FileChange
from agent.workspaces.base import ConflictError, WorkspaceError
from agent.workspaces.editor import EditorWorkspace
from tests.conftest import write_files


class Editor:
    """Open buffers by absolute path; a path without a buffer reads the disk, as editors do."""

    def __init__(self, buffers: dict[str, str] | None = None, refuse: set[str] | None = None) -> None:
        self.buffers = dict(buffers or {})
        self.refuse = refuse or set()
        self.writes: list[tuple[str, str]] = []

    async def read(self, path: str) -> str:
        return self.buffers[path] if path in self.buffers else Path(path).read_text()

    async def write(self, path: str, text: str) -> None:
        if path in self.refuse:
            raise OSError("the buffer is read-only")
        self.writes.append((path, text))
        self.buffers[path] = text


def workspace(root: Path, editor: Editor, applied: list[list[FileChange]] | None = None) -> EditorWorkspace:
    return EditorWorkspace(root, editor.read, editor.write,
                           on_applied=applied.append if applied is not None else None)


async def test_reads_the_buffer_and_writes_keep_its_line_ends(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.txt": "disk\n"})
    editor = Editor({str(root / "a.txt"): "one\r\ntwo\r\n"})
    applied: list[list[FileChange]] = []
    ws = workspace(root, editor, applied)
    assert await ws.read_text("a.txt") == "one\ntwo\n"
    change = FileChange("a.txt", "one\ntwo\n", "one\nTWO\n")
    await ws.apply([change])
    assert editor.writes == [(str(root / "a.txt"), "one\r\nTWO\r\n")]
    assert (root / "a.txt").read_text() == "disk\n"
    assert applied == [[change]]
    assert ws.kind == "editor" and "unsaved" in ws.facts()["open files"]


async def test_an_edit_on_a_buffer_that_changed_since_it_was_read_is_refused(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.txt": "x\n"})
    editor = Editor({str(root / "a.txt"): "x = 1\n"})
    ws = workspace(root, editor)
    ws.note_read("a.txt", await ws.read_text("a.txt"))
    editor.buffers[str(root / "a.txt")] = "x = 2  # typed meanwhile\n"
    with pytest.raises(ConflictError, match="changed since you last read it"):
        await ws.load_for_edit("a.txt")
    # A change prepared from the old text is refused at apply time too, and nothing is written.
    with pytest.raises(ConflictError, match="changed in the editor"):
        await ws.apply([FileChange("a.txt", "x = 1\n", "x = 3\n")])
    assert editor.writes == []


async def test_a_refused_write_puts_back_the_files_already_written(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.txt": "a\n", "b.txt": "b\n"})
    editor = Editor(refuse={str(root / "b.txt")})
    ws = workspace(root, editor)
    with pytest.raises(WorkspaceError, match="could not write b.txt through the editor: the buffer is read-only"):
        await ws.apply([FileChange("a.txt", "a\n", "A\n"), FileChange("b.txt", "b\n", "B\n")])
    assert editor.buffers[str(root / "a.txt")] == "a\n"
    assert editor.writes == [(str(root / "a.txt"), "A\n"), (str(root / "a.txt"), "a\n")]


async def test_the_folders_rules_still_hold(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.txt": "a\n"})
    (tmp_path / "outside.txt").write_text("secret\n")
    ws = workspace(root, Editor())
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        await ws.read_text(str(tmp_path / "outside.txt"))
    with pytest.raises(WorkspaceError, match="does not exist"):
        await ws.read_text("missing.txt")
    with pytest.raises(WorkspaceError, match="belong to git"):
        await ws.apply([FileChange(".git/config", None, "x\n")])


async def test_without_the_editors_callables_it_is_the_folder_on_disk(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.txt": "a\n"})
    applied: list[list[FileChange]] = []
    ws = EditorWorkspace(root, on_applied=applied.append)
    await ws.apply([FileChange("a.txt", "a\n", "b\n")])
    assert (root / "a.txt").read_text() == "b\n" and len(applied) == 1
