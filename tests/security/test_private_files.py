"""Sessions, checkpoints and caches are private to the user; a killed checkpoint does not wedge undo."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agent import paths
from agent.checkpoints import CheckpointError, Checkpoints
from tests.fakellm import Reply, call


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Any:
    old = os.umask(0o022)  # the usual umask: without care, files come out world-readable
    yield
    os.umask(old)


async def test_sessions_and_checkpoints_are_private(make_harness: Any, open_umask: None) -> None:
    h = make_harness(files={"a.txt": "one\n", ".env": "TOKEN=hunter2-value\n"})
    os.chmod(h.root / ".env", 0o600)
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="two\n")]), Reply(text="done"))
    await h.run()
    assert h.of("checkpoint")
    assert _mode(h.session.writer.path) == 0o600
    for folder in (paths.sessions_dir(), paths.data_dir(), paths.checkpoints_dir()):
        assert _mode(folder) == 0o700, folder
    git_dir = h.session.checkpoints.git_dir
    assert _mode(git_dir) == 0o700
    exposed = [p for p in git_dir.rglob("*") if p.is_file() and _mode(p) & 0o077
               and ("objects" in p.parts or p.name == "index")]
    assert not exposed, exposed


def test_existing_session_file_and_folders_are_tightened(open_umask: None) -> None:
    from agent.session.record import SessionStore, SessionWriter

    folder = paths.sessions_dir()
    folder.mkdir(parents=True, mode=0o755)
    os.chmod(paths.data_dir(), 0o755)
    old = folder / "old.jsonl"
    old.write_text('{"t": 1, "kind": "meta", "data": {}}\n')
    os.chmod(old, 0o644)
    SessionWriter(old, "old").close()
    SessionStore().create({}).close()
    assert _mode(old) == 0o600 and _mode(folder) == 0o700 and _mode(paths.data_dir()) == 0o700


def test_a_lock_left_by_a_killed_checkpoint_is_recovered(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    checkpoints = Checkpoints(root, store=tmp_path / "store")
    first = checkpoints.create_sync("first")
    # What `git add` leaves when the run is killed in the middle of it.
    (checkpoints.git_dir / "index.lock").write_bytes(b"partial")
    (checkpoints.git_dir / "refs" / "heads" / "checkpoints.lock").write_text("0" * 40)
    (root / "a.txt").write_text("two\n")
    checkpoints.create_sync("second")
    restored, _ = checkpoints.restore_sync(first.id, include_untouched=True)
    assert restored.id == first.id and (root / "a.txt").read_text() == "one\n"
    assert not (checkpoints.git_dir / "index.lock").exists()


def test_a_lock_that_cannot_be_removed_is_named(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    checkpoints = Checkpoints(root, store=tmp_path / "store")
    checkpoints.create_sync("first")
    lock = checkpoints.git_dir / "index.lock"
    lock.mkdir()  # not a file: unlink fails, even for root
    (lock / "x").write_text("")
    with pytest.raises(CheckpointError) as caught:
        checkpoints.create_sync("second")
    assert str(lock) in str(caught.value) and "delete it by hand" in str(caught.value)
