"""Text from outside shown as text: control and bidi characters made visible.

Commands, paths, diffs, tool output and model text come from a repository, a model reply or a
room peer. Printed raw, an escape sequence could erase what came before it (`rm -rf src; :
\\x1b[2K\\r$ ls` shown as `$ ls`), and a right-to-left override could reorder what follows. Every
front end passes such text through `visible` before it reaches a terminal or a widget:

- C0 controls (except a newline and tab in multi-line text), DEL and C1 controls become
  `\\xNN`; ESC becomes `\\x1b`, a carriage return `\\r` (a CRLF line end in multi-line text is an
  ordinary line end);
- bidi embeddings, overrides, isolates and marks (U+202A-202E, U+2066-2069, U+200E/F, U+061C)
  and the line and paragraph separators U+2028/2029 become `⟨U+202E⟩`.

`json_line` does the lossless counterpart for JSON output (the characters become `\\uXXXX`
escapes, so a reader gets the same string back), and `path_problem` says why a file name with
such characters is refused by the edit tools.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
SEPARATORS = frozenset("\u2028\u2029")
# Everything that is not plain text to a terminal, in either mode.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMES = {"\x1b": "\\x1b", "\r": "\\r", "\n": "\\n", "\t": "\\t"}

T = TypeVar("T")


def _shown(match: re.Match[str]) -> str:
    return shown_char(match.group())


def shown_char(char: str) -> str:
    """How one control or bidi character is shown: `\\x1b`, `\\r`, `⟨U+202E⟩`."""
    if char in _NAMES:
        return _NAMES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"⟨U+{code:04X}⟩"


def visible(text: str, multiline: bool = True) -> str:
    """`text` with every control and bidi character made visible.

    Multi-line text keeps its newlines and tabs (a CRLF becomes a newline, and a carriage return
    at the very end is dropped: it is half of a CRLF split across streamed chunks, and dropped it
    cannot move the cursor). A single-line field (`multiline=False`) shows them too.
    """
    if not text:
        return text
    if not multiline:
        return _UNSAFE_LINE.sub(_shown, text)
    text = text.replace("\r\n", "\n")
    if text.endswith("\r"):
        text = text[:-1]
    return _UNSAFE.sub(_shown, text)


def line(text: str) -> str:
    """A single-line field (a command's key argument, a path, a title) made visible."""
    return visible(text, multiline=False)


def is_clean(text: str) -> bool:
    """True when `visible` would leave `text` as it is (multi-line rules)."""
    return _UNSAFE.search(text) is None and "\r" not in text


def json_line(serialised: str) -> str:
    """A JSON document with DEL, C1, bidi and U+2028/2029 written as `\\uXXXX` escapes.

    Those characters are legal raw inside JSON strings, so serialisers leave them; on a terminal
    they act, and U+2028/2029 end a line for JavaScript readers. Escaped, the JSON decodes to the
    same value. (C0 controls are always escaped by JSON itself.)
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", serialised)


# Characters a name shows nothing (or a plain space) for: a name holding one looks like another name.
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")


def invisible(char: str) -> bool:
    """Zero-width, format and odd-space characters: U+200B, U+200D, U+2060, U+FEFF, a soft hyphen,
    a no-break space, a variation selector, a tag character, a Hangul filler…"""
    import unicodedata

    category = unicodedata.category(char)
    return (category in ("Cf", "Zl", "Zp") or (category == "Zs" and char != " ") or char in _INVISIBLE
            or 0xFE00 <= ord(char) <= 0xFE0F or 0xE0100 <= ord(char) <= 0xE01EF)


def path_problem(path: str) -> str | None:
    """Why a file name may not be created (None: it may): control, bidi or invisible characters in it."""
    found = sorted({char for char in path if _UNSAFE_LINE.match(char) or invisible(char)})
    if not found:
        return None
    shown = ", ".join(shown_char(char) for char in found)
    return (f"refusing to create {line(path)!r}: its name holds control, bidi or invisible characters ({shown}) "
            "that make it look like another name; pick a name of plain characters")


def shown_copy(value: T) -> T:
    """A copy of an event (a pydantic model, list, dict or str) with every string made visible.

    For display only: the original keeps the exact bytes that tools and files need.
    """
    if isinstance(value, str):
        return visible(value) if not is_clean(value) else value  # type: ignore[return-value]
    if isinstance(value, list):
        return [shown_copy(item) for item in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(shown_copy(item) for item in value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {key: shown_copy(item) for key, item in value.items()}  # type: ignore[return-value]
    fields = getattr(type(value), "model_fields", None)
    if fields is None:
        return value
    updates: dict[str, Any] = {}
    for name in fields:
        item = getattr(value, name)
        copied = shown_copy(item)
        if copied is not item:
            updates[name] = copied
    return value.model_copy(update=updates) if updates else value  # type: ignore[attr-defined]
