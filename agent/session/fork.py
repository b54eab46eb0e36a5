"""`/fork` and `run --fork ID`: a copy of a recorded session under a new id, to try another direction.

The copy is the original's lines with its header naming the new id (and `forked_from`), and its
images (agent/session/media.py) linked or copied; the original file is only read, never locked or
written, so a session another process has open can be forked and stays byte for byte as it was.
The copy is a session like any other: resumed by its id, with its own lock.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path

from agent import paths
from agent.session import media
from agent.session.record import SessionError, SessionStore


def fork(store: SessionStore, ref: str, workspace: str | None = None) -> str:
    """Copy the session `ref` (an id, a prefix or `last`) to a new id, returned."""
    source = store.resolve(ref, workspace)
    new_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    target = store.directory / f"{new_id}.jsonl"
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise SessionError(f"session {source.stem} cannot be read ({exc.strerror})") from None
    lines = data.split(b"\n")[:-1]  # a line cut off by a crash (no newline yet) is left out
    copied = b"".join(_renamed(line, new_id) + b"\n" for line in lines)
    fd = paths.open_private(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.write(fd, copied)
        os.fsync(fd)
    finally:
        os.close(fd)
    _copy_media(media.folder(source), media.folder(target))
    os.utime(target)  # the newest session: `last` continues the fork
    return new_id


def _renamed(line: bytes, new_id: str) -> bytes:
    """A header line names the new id and where it came from; other lines are kept as they are."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict) or record.get("kind") != "meta" or not isinstance(record.get("data"), dict):
        return line
    meta = record["data"]
    if "session_id" in meta:
        meta["forked_from"], meta["session_id"] = meta["session_id"], new_id
        meta["created"] = time.time()  # listed by when it was forked, as "fork of ID: ..." (record.py)
    return json.dumps(record, ensure_ascii=False).encode()


def _copy_media(source: Path, target: Path) -> None:
    if not source.is_dir():
        return
    paths.private_dir(target)
    for item in source.iterdir():
        if item.name.startswith("."):
            continue
        try:
            os.link(item, target / item.name)  # same bytes, never rewritten: a link is a copy
        except OSError:
            shutil.copy2(item, target / item.name)
