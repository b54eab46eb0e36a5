"""Tool-call arguments that are almost JSON: repaired when the repair is unambiguous, else located.

Models write trailing commas, unquoted keys, single quotes and raw newlines inside strings. The
`json-repair` library fixes those; it also "fixes" text that was cut off (closing what was left
open) or that lost its structure, where the result would be a guess. A repair is taken only when
the text is complete (every bracket it opens is closed, no string left open) and the repaired
JSON holds exactly the letters and digits of the original (nothing dropped, nothing invented).
Otherwise `locate` says where the JSON broke, for the model to fix its call.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)")


def repair(text: str) -> dict[str, Any] | None:
    """The arguments object `text` unambiguously means, or None when it is not that close to JSON."""
    if not _complete(text):
        return None
    try:
        from json_repair import repair_json

        fixed = repair_json(text, return_objects=False, ensure_ascii=False)
        value = json.loads(fixed) if isinstance(fixed, str) and fixed else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    fixed = json.dumps(value, ensure_ascii=False)
    if _content(text) != _content(fixed) or fixed.count('""') > text.count('""') + text.count("''"):
        return None  # something dropped or invented (`{"x": }` is not `{"x": ""}`)
    return value


def _content(text: str) -> str:
    """The letters and digits of JSON-ish text, escapes left out (a raw newline and `\\n` agree)."""
    return "".join(ch for ch in _ESCAPE.sub("", text).lower() if ch.isalnum())


def _complete(text: str) -> bool:
    """One object whose brackets all close and whose strings (either quote) all end."""
    text = text.strip()
    if not text.startswith("{") or not text.endswith("}"):
        return False
    depth, quote, escaped = 0, "", False
    for index, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth < 0 or (depth == 0 and index != len(text) - 1):
                return False
    return depth == 0 and not quote


def locate(text: str, error: json.JSONDecodeError) -> str:
    """Where the JSON broke, as the model can find it: line, column and the text around it."""
    start = max(0, error.pos - 30)
    before, after = text[start : error.pos], text[error.pos : error.pos + 30]
    if error.pos >= len(text.rstrip()):
        where = f"it ends after {len(text)} characters, before the JSON was complete (cut off?)"
    else:
        where = f"at line {error.lineno} column {error.colno} (character {error.pos})"
    near = f"{'…' if start else ''}{before}⟨here⟩{after}{'…' if error.pos + 30 < len(text) else ''}"
    return f"{error.msg.removesuffix(' at')} {where}, near: {json.dumps(near, ensure_ascii=False)}"
