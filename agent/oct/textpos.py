"""Positions in shared texts, in the three units that meet here.

Python strings count code points; pycrdt's Text API (insert, delete, len, event deltas) counts
UTF-8 bytes; pycrdt's sticky indices (like Yjs itself) count UTF-16 code units. Code in this
package computes in string indices and converts at the pycrdt boundary with these helpers.

Lines are split on "\n" only; a "\r" before it stays part of the line's text (hosts normalise
line ends, but a CRLF text keeps its "\r"s and must keep them through our edits).
"""

from __future__ import annotations

import re
from bisect import bisect_right

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # two UTF-16 units each


def byte_offset(text: str, index: int) -> int:
    """The UTF-8 byte offset of string index `index` in text."""
    if text.isascii():
        return index
    return len(text[:index].encode("utf-8", "surrogatepass"))


def char_index(data: bytes, offset: int) -> int:
    """The string index of UTF-8 byte offset `offset` in data (a cut code point rounds down)."""
    return len(data[:offset].decode("utf-8", "ignore"))


def utf16_offset(text: str, index: int) -> int:
    """The UTF-16 offset (sticky-index unit) of string index `index` in text."""
    if text.isascii():
        return index
    return index + len(_ASTRAL.findall(text, 0, index))


def from_utf16(text: str, offset: int) -> int:
    """The string index of UTF-16 offset `offset` in text."""
    if text.isascii():
        return offset
    extra = 0
    for match in _ASTRAL.finditer(text):
        if match.start() + extra >= offset:
            break
        extra += 1
    return offset - extra


def line_starts(text: str) -> list[int]:
    """String index where each line starts (one entry per line; a final "\n" opens a last line)."""
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def line_of(starts: list[int], index: int) -> int:
    """0-based line holding string index `index`."""
    return bisect_right(starts, index) - 1


def line_span(text: str, index: int) -> tuple[int, int]:
    """(start, end) string indices of the line holding `index`, end excluding the "\n"."""
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return start, len(text) if end == -1 else end
