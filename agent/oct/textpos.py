"""Positions in shared texts, in the three units that meet here.

Python strings count code points; pycrdt's Text API (insert, delete, len, event deltas) counts
UTF-8 bytes; pycrdt's sticky indices (like Yjs itself) count UTF-16 code units. Code in this
package computes in string indices and converts at the pycrdt boundary (`byte_offset`).

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
