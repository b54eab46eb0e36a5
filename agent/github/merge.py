"""A line-based three-way merge: carry our edits onto a file that changed meanwhile.

Used when the work branch moved after the edits were made. Like git, changes from both sides
that overlap or touch the same lines conflict (unless they are identical); then nothing is
merged and the caller stops with a clear message instead of guessing.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class _Change:
    """Base lines [start, end) replaced by side lines [new_start, new_end)."""

    start: int
    end: int
    new_start: int
    new_end: int
    ours: bool


def merge3(base: str | None, ours: str | None, theirs: str | None) -> tuple[bool, str | None]:
    """(clean, merged text); None texts mean the file is absent on that side."""
    if ours == theirs or base == theirs:
        return True, ours
    if base == ours:
        return True, theirs
    if base is None or ours is None or theirs is None:
        return False, None  # created on both sides, or deleted on one and changed on the other
    merged = _merge_lines(base.splitlines(True), ours.splitlines(True), theirs.splitlines(True))
    return (merged is not None), merged


def _changes(base: list[str], side: list[str], ours: bool) -> list[_Change]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [_Change(i1, i2, j1, j2, ours) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _groups(changes: list[_Change]) -> list[list[_Change]]:
    """Changes that overlap or touch, grouped (sorted by base position)."""
    groups: list[list[_Change]] = []
    end = -1
    for change in sorted(changes, key=lambda c: (c.start, c.end)):
        if groups and change.start <= end:
            groups[-1].append(change)
            end = max(end, change.end)
        else:
            groups.append([change])
            end = change.end
    return groups


def _apply(base: list[str], side: list[str], changes: list[_Change], start: int, end: int) -> list[str]:
    """Base lines [start, end) with one side's changes applied."""
    out: list[str] = []
    cursor = start
    for change in sorted(changes, key=lambda c: c.start):
        out += base[cursor:change.start]
        out += side[change.new_start:change.new_end]
        cursor = change.end
    return out + base[cursor:end]


def _merge_lines(base: list[str], ours: list[str], theirs: list[str]) -> str | None:
    out: list[str] = []
    cursor = 0
    for group in _groups(_changes(base, ours, True) + _changes(base, theirs, False)):
        start, end = min(c.start for c in group), max(c.end for c in group)
        out += base[cursor:start]
        mine = [c for c in group if c.ours]
        other = [c for c in group if not c.ours]
        ours_part = _apply(base, ours, mine, start, end)
        theirs_part = _apply(base, theirs, other, start, end)
        if mine and other and ours_part != theirs_part:
            return None
        out += ours_part if mine else theirs_part
        cursor = end
    return "".join(out + base[cursor:])
