"""The `---` front matter of a Markdown file (commands, SKILL.md), read the way users write it.

YAML first; Claude Code's documented command files also write values YAML cannot read
(`argument-hint: [pr-number] [priority]`), so when YAML fails, or reads a one-line string field as
something else, the plain `key: value` text of that line is used. A file whose front matter is
neither is refused with the reason (`FrontMatterError`).
"""

from __future__ import annotations

import re
from typing import Any

KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:(.*)$")


class FrontMatterError(ValueError):
    """The front matter cannot be read; the message says why (for a one-line notice)."""


def split(text: str) -> tuple[str | None, str]:
    """(the front matter's text, or None when there is none; the body)."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1:]).lstrip("\n")
    raise FrontMatterError("the front matter (after the first `---`) has no closing `---`")


def _plain(head: str) -> dict[str, str]:
    """Top-level `key: value` lines as text (indented lines continue the previous value)."""
    found: dict[str, str] = {}
    key = None
    for number, line in enumerate(head.splitlines(), start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t" and key is not None:
            found[key] = (found[key] + " " + line.strip()).strip()
            continue
        match = KEY_LINE.match(line)
        if match is None:
            raise FrontMatterError(f"line {number} is not `key: value`: {line.strip()[:60]!r}")
        key = match.group(1)
        found[key] = _unquote(match.group(2).strip())
    return found


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse(text: str, strings: tuple[str, ...] = ()) -> tuple[dict[str, Any], str]:
    """(the front matter's values, the body). `strings` are fields that are one line of text: when
    YAML reads them as a list or a number, their text as written is kept."""
    head, body = split(text)
    if head is None:
        return {}, body
    import yaml

    try:
        values = yaml.safe_load(head)
    except yaml.YAMLError:
        return dict(_plain(head)), body  # FrontMatterError when it is not `key: value` either
    if values is None:
        return {}, body
    if not isinstance(values, dict):
        raise FrontMatterError("the front matter is not a list of `key: value` lines")
    values = {str(k): v for k, v in values.items()}
    if any(key in values and not isinstance(values[key], str) and values[key] is not None for key in strings):
        plain = _plain(head)
        for key in strings:
            if key in values and not isinstance(values[key], str) and values[key] is not None:
                values[key] = plain.get(key, str(values[key]))
    return values, body


def text_list(value: Any) -> list[str]:
    """A tool list written as YAML list or as `A, B(x, y), C` text: its items."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    items, depth, current = [], 0, ""
    for char in str(value) + ",":
        depth += (char == "(") - (char == ")")
        if depth == 0 and (char == "," or char.isspace()):
            if current.strip():
                items.append(current.strip())
            current = ""
        else:
            current += char
    return items
