"""Positions in shared texts: pycrdt counts UTF-8 bytes, Python strings count code points.

Lines are split on "\n" only; a "\r" before it stays part of the line's text (hosts normalise
line ends, but a CRLF text keeps its "\r"s and must keep them through our edits).
"""

from __future__ import annotations

from bisect import bisect_right


def byte_offset(text: str, index: int) -> int:
    """The UTF-8 byte offset of string index `index` in text."""
    if text.isascii():
        return index
    return len(text[:index].encode("utf-8", "surrogatepass"))


def char_index(data: bytes, offset: int) -> int:
    """The string index of UTF-8 byte offset `offset` in data (a cut code point rounds down)."""
    return len(data[:offset].decode("utf-8", "ignore"))


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
