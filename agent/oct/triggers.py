"""Finding `@<name>` prompts in remote edits and chat messages.

A remote change that inserts a newline into a line containing `@<name>` (whole word, any case)
is a trigger, whether the newline comes alone (typing Enter) or inside pasted text; the line the
newline completes is the prompt line. The prompt is the rest of that line after the mention, with
comment markers stripped. Text that appears in a text that was empty before (a host sharing a
file, our own first sync) is content, not typing, and never triggers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal


_OPENERS = ("<!--", "/*", "//", "--", "#", ";", ":", ",")
_CLOSERS = ("-->", "*/")


def mention_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w@.]){re.escape('@' + name)}(?![\w-])", re.IGNORECASE)


def clean_prompt(text: str) -> str:
    """Strip comment markers and separators around a prompt."""
    text = text.strip()
    changed = True
    while changed and text:
        changed = False
        for closer in _CLOSERS:
            if text.endswith(closer):
                text, changed = text[: -len(closer)].rstrip(), True
        for opener in _OPENERS:
            if text.startswith(opener):
                text, changed = text[len(opener) :].lstrip(), True
    return text


def prompt_from_line(line: str, pattern: re.Pattern[str]) -> str | None:
    """The prompt in a line that mentions the agent (None: no mention or nothing asked)."""
    match = pattern.search(line)
    if match is None:
        return None
    prompt = clean_prompt(line[match.end() :])
    return prompt or None


def prompt_from_chat(message: str, pattern: re.Pattern[str]) -> str | None:
    match = pattern.search(message)
    if match is None:
        return None
    after = clean_prompt(message[match.end() :])
    if after:
        return after
    return clean_prompt(message[: match.start()]) or None


@dataclass(frozen=True)
class Trigger:
    source: Literal["document", "chat", "local"]  # local: typed into coder-tui itself
    prompt: str
    origin: str = ""  # peer id of whoever typed or wrote it, when known
    path: str | None = None
    line: int = 0  # 0-based prompt line at detection time
    line_offset: int = 0  # UTF-8 offset of the prompt line's start at detection time
    anchor: Any = field(default=None, compare=False, repr=False)  # sticky position of that start

    @property
    def where(self) -> str:
        if self.source in ("chat", "local"):
            return self.source
        return f"{self.path}:{self.line + 1}"


def inserted_newlines(delta: list[dict[str, Any]]) -> list[int]:
    """UTF-8 offsets (in the changed text) of every newline the change inserted."""
    offsets: list[int] = []
    index = 0
    for op in delta:
        if "retain" in op:
            index += int(op["retain"])
        elif isinstance(op.get("insert"), str):
            chunk = op["insert"].encode("utf-8")
            pos = chunk.find(b"\n")
            while pos != -1:
                offsets.append(index + pos)
                pos = chunk.find(b"\n", pos + 1)
            index += len(chunk)
    return offsets


def triggers_in_delta(
    path: str,
    delta: list[dict[str, Any]],
    before_len: int,
    current: Callable[[], str],
    pattern: re.Pattern[str],
) -> list[Trigger]:
    """Triggers in one remote change of a text (delta offsets are UTF-8 bytes)."""
    if before_len == 0:
        return []
    newline_offsets = inserted_newlines(delta)
    if not newline_offsets:
        return []
    data = current().encode("utf-8")
    found: list[Trigger] = []
    for offset in newline_offsets:
        start = data.rfind(b"\n", 0, offset) + 1
        line = data[start:offset].decode("utf-8", "replace")
        prompt = prompt_from_line(line, pattern)
        if prompt is not None:
            found.append(
                Trigger(
                    source="document",
                    prompt=prompt,
                    path=path,
                    line=data.count(b"\n", 0, start),
                    line_offset=start,
                )
            )
    return found
