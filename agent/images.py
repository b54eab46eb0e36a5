"""Images in a prompt: read and checked, sent as OpenAI image content parts, recorded by reference.

A prompt with images is a user message whose content is a list of parts, `{"type": "text", ...}`
then one `{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}` per image
(each client turns these into its provider's own form). Only models that accept images get them:
`supports_vision` in litellm's model table, or the `vision` setting for models it does not know (a
local server behind `api_base`). The session file records an image as a reference to a file of its
bytes in the session's folder (agent/session/media.py), not as base64 in the JSONL line.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_BYTES = 5 * 1024 * 1024  # per image: the smallest provider limit (Anthropic's 5 MB)
FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
SUFFIXES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif", ".webp": "webp"}
IMAGE_TOKENS = 1600  # what one image is counted as when the conversation's size is estimated


class ImageError(Exception):
    """An image that cannot be sent; the message names it and why (one line)."""


@dataclass(frozen=True)
class Image:
    data: bytes
    format: str  # a key of FORMATS
    name: str  # what the user gave (a path, a client's name), for messages

    @property
    def mime(self) -> str:
        return FORMATS[self.format]

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def part(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.url()}}


def sniff(data: bytes) -> str | None:
    """The image format of `data` from its first bytes (None: not one of FORMATS)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def from_bytes(data: bytes, name: str) -> Image:
    """A checked image: one of png, jpeg, gif, webp (by its content, not its name), at most MAX_BYTES."""
    if not data:
        raise ImageError(f"{name} is empty")
    if len(data) > MAX_BYTES:
        raise ImageError(f"{name} is {len(data) / 1e6:.1f} MB; images are sent up to {MAX_BYTES // 2**20} MB "
                         "(scale it down or crop it)")
    kind = sniff(data)
    if kind is None:
        raise ImageError(f"{name} is not a png, jpeg, gif or webp image")
    return Image(data, kind, name)


def from_base64(data: str, name: str) -> Image:
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise ImageError(f"{name} is not valid base64") from None
    return from_bytes(raw, name)


def from_path(path: Path, name: str | None = None) -> Image:
    """A checked image from a file: a regular file (not /dev/zero, a FIFO or a folder), its size
    checked before it is read and at most MAX_BYTES + 1 bytes read whatever it claims."""
    shown = name or str(path)
    try:
        data = _read_regular(path, shown)
    except FileNotFoundError:
        raise ImageError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise ImageError(f"{shown} is a folder, not an image") from None
    except OSError as exc:
        raise ImageError(f"{shown} cannot be read ({exc.strerror})") from None
    return from_bytes(data, shown)


def _read_regular(path: Path, shown: str) -> bytes:
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens without waiting for a writer
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(info.st_mode):
            raise ImageError(f"{shown} is not a regular file (a device, a FIFO or a socket), not an image")
        if info.st_size > MAX_BYTES:
            raise ImageError(f"{shown} is {info.st_size / 1e6:.1f} MB; images are sent up to {MAX_BYTES // 2**20} MB "
                             "(scale it down or crop it)")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(MAX_BYTES + 1)  # a file that grew meanwhile is refused by from_bytes, not read whole
    finally:
        os.close(fd)


def looks_like_image(path: str) -> bool:
    """The name ends like an image file (the content is checked when it is read)."""
    return Path(path).suffix.lower() in SUFFIXES


def named_in(text: str, root: Path | None) -> list[tuple[str, Path]]:
    """The images a prompt names, as (what was typed, path): `@path` mentions of image files
    (relative to the workspace `root`), and bare paths a terminal pastes when a file is dropped on
    it (absolute, `~/...` or `file://...`, quoted or with escaped spaces) of image files that exist."""
    import re
    import shlex
    from urllib.parse import unquote, urlparse

    try:
        tokens = shlex.split(text)
    except ValueError:  # an unbalanced quote: plain words
        tokens = text.split()
    found: dict[Path, str] = {}
    for token in tokens:
        mention = token.startswith("@")
        name = re.sub(r"[.,;:!?)]+$", "", token[1:] if mention else token)
        if not looks_like_image(name):
            continue
        raw = unquote(urlparse(name).path) if name.startswith("file://") else name
        path = Path(raw).expanduser()
        if not path.is_absolute():
            if not mention or root is None:
                continue
            path = root / path
        if mention or path.is_file():
            found.setdefault(path, name)
    return [(shown, path) for path, shown in found.items()]


def content(text: str, images: list[Image]) -> str | list[dict[str, Any]]:
    """A user message's content: the text alone, or the text and the images as parts."""
    if not images:
        return text
    return [{"type": "text", "text": text}, *(image.part() for image in images)]


def text_of(value: Any) -> str:
    """The text of a message's content (a list's text parts joined; images left out)."""
    if isinstance(value, list):
        return "\n".join(str(p.get("text", "")) for p in value if isinstance(p, dict) and p.get("type") == "text")
    return "" if value is None else str(value)


def count(value: Any) -> int:
    """How many images a message's content holds."""
    if not isinstance(value, list):
        return 0
    return sum(1 for p in value if isinstance(p, dict) and p.get("type") == "image_url")


def json_chars(message: dict[str, Any]) -> int:
    """The message's JSON length for the size estimate, an image counted as IMAGE_TOKENS tokens
    (not as its base64 text, which would make one screenshot look like a whole context window)."""
    parts = message.get("content")
    if not count(parts):
        return len(json.dumps(message, ensure_ascii=False))
    kept = [p for p in parts if not (isinstance(p, dict) and p.get("type") == "image_url")]
    return len(json.dumps({**message, "content": kept}, ensure_ascii=False)) + count(parts) * IMAGE_TOKENS * 4


def accepts(model: str, override: bool | None) -> bool:
    """Whether `model` takes image input: the `vision` setting when given, else its facts (litellm's
    model table, read without importing litellm: agent/llm/facts.py)."""
    if override is not None:
        return override
    from agent.llm.facts import facts

    return facts(model).vision


def refusal(model: str) -> str:
    """The one line said when images are given to a model that does not accept them."""
    return (f"{model} does not accept images (not in litellm's list of models that take images); use a model "
            "that does, or set "
            "`vision = true` in the config if it does")


async def prompt_images(text: str, root: Path | None) -> tuple[list[Image], list[str]]:
    """The images a prompt names, read and checked off the event loop, and a line for each that
    could not be (the prompt is then not sent: the user fixes the name or removes it)."""
    import asyncio

    images: list[Image] = []
    problems: list[str] = []
    for shown, path in named_in(text, root):
        try:
            images.append(await asyncio.to_thread(from_path, path, shown))
        except ImageError as exc:
            problems.append(f"Not sent (Up recalls it): {exc}")
    return images, problems
