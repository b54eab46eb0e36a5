"""A session's images on disk: each in the session's folder `ID.media/`, named by its SHA-256.

The JSONL line of a prompt with images holds a reference (`media:HASH.png`) where the request held
a data URL. Why not base64 in the line: a screenshot is 0.5-3 MB, a third more as base64, and
every listing of the sessions (`coder-tui sessions`, the app's picker) reads the lines up to the
first prompt; the same image sent twice (a resumed session that sends it again) is stored once;
and `load` stays a line-by-line JSON read. Resuming puts the data URLs back (`inflate`); an image
file that went missing becomes a text part saying so, never a failed resume.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from agent import paths
from agent.images import FORMATS

SCHEME = "media:"


def folder(session_file: Path) -> Path:
    return session_file.with_suffix(".media")


def recorded(message: dict[str, Any], where: Path) -> dict[str, Any]:
    """The message as the session file records it: images written to `where`, referenced by name."""
    parts = message.get("content")
    if not isinstance(parts, list) or not any(_data_url(p) for p in parts):
        return message
    return {**message, "content": [_stored(p, where) if _data_url(p) else p for p in parts]}


def _data_url(part: Any) -> str | None:
    if isinstance(part, dict) and part.get("type") == "image_url":
        url = (part.get("image_url") or {}).get("url")
        if isinstance(url, str) and url.startswith("data:image/"):
            return url
    return None


def _stored(part: dict[str, Any], where: Path) -> dict[str, Any]:
    import hashlib

    url = _data_url(part) or ""
    head, _, data = url.partition(",")
    kind = head.removeprefix("data:image/").split(";")[0]
    raw = base64.b64decode(data)
    name = f"{hashlib.sha256(raw).hexdigest()}.{kind if kind in FORMATS else 'bin'}"
    target = where / name
    if not target.exists():
        paths.private_dir(where)
        partial = where / f".{name}.part"
        fd = paths.open_private(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            os.write(fd, raw)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(partial, target)
    return {**part, "image_url": {**part["image_url"], "url": SCHEME + name}}


def inflate(messages: list[dict[str, Any]], where: Path) -> list[dict[str, Any]]:
    """The recorded messages with their image references read back into data URLs."""
    return [_inflated(m, where) if _has_reference(m) else m for m in messages]


def _has_reference(message: dict[str, Any]) -> bool:
    parts = message.get("content")
    return isinstance(parts, list) and any(_reference(p) for p in parts)


def _reference(part: Any) -> str | None:
    if isinstance(part, dict) and part.get("type") == "image_url":
        url = (part.get("image_url") or {}).get("url")
        if isinstance(url, str) and url.startswith(SCHEME):
            return url[len(SCHEME):]
    return None


def _inflated(message: dict[str, Any], where: Path) -> dict[str, Any]:
    parts = []
    for part in message["content"]:
        name = _reference(part)
        if name is None:
            parts.append(part)
            continue
        kind = name.rsplit(".", 1)[-1]
        try:
            if "/" in name or kind not in FORMATS:
                raise FileNotFoundError(name)
            data = base64.b64encode((where / name).read_bytes()).decode("ascii")
        except OSError:
            parts.append({"type": "text", "text": f"[an image of this message is missing from {where}]"})
            continue
        parts.append({**part, "image_url": {**part["image_url"], "url": f"data:{FORMATS[kind]};base64,{data}"}})
    return {**message, "content": parts}
