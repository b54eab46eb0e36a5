"""Edits that land where the model meant them, even while people keep typing.

When the model is shown a shared text we take a `Snapshot`: the text it saw and, at every line
boundary, two pycrdt sticky indices (one bound to the first character of the line, one to the
newline before it). At edit time a whole-file change is diffed against the snapshot into line-range
replacements; each range is found again through its anchors in the current text. If the text of
a target range differs from what the model saw (someone edited those lines), the edit is refused
with a request to re-read; otherwise all replacements go into one Yjs transaction.

A "mask" hides one span the agent owns (the spinner character) from the model's view and from the
comparison; the edit transaction deletes it, and the spinner puts it back on its next frame.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pycrdt import Assoc, Text

from agent.diffing import compute_hunks
from agent.workspaces.base import ConflictError

Mask = Callable[[], "tuple[int, int] | None"]  # (byte offset, byte length) of a span to hide
_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def split_keepends(text: str) -> list[str]:
    """Lines split on "\n" only, each keeping its newline (joining gives text back)."""
    return _LINE.findall(text)


def _unmasked(raw: bytes, mask: tuple[int, int] | None) -> tuple[bytes, int, int]:
    if mask is None:
        return raw, -1, 0
    start, length = mask
    return raw[:start] + raw[start + length :], start, length


@dataclass
class Snapshot:
    """What the model saw of a shared text, anchored in the CRDT."""

    path: str
    raw_lines: list[str]  # lines as they are in the text (mask removed, "\r\n" kept)
    crlf: bool
    _after: list[Any] = field(repr=False)  # per boundary: bound to the next character, or None
    _before: list[Any] = field(repr=False)  # per boundary: bound to the previous character, or None

    @property
    def text(self) -> str:
        """The text the model saw ("\n" line ends)."""
        view = "".join(self.raw_lines)
        return view.replace("\r\n", "\n") if self.crlf else view


def take_snapshot(path: str, text: Text, mask: Mask | None = None) -> Snapshot:
    """Snapshot text now (call without awaiting in between reading and snapshotting)."""
    raw_all = str(text).encode("utf-8")
    clean, m_start, m_len = _unmasked(raw_all, mask() if mask else None)
    raw_text = clean.decode("utf-8")
    lines = split_keepends(raw_text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    total = len(raw_all)
    after: list[Any] = []
    before: list[Any] = []
    with text.doc.transaction() as txn:
        for offset in offsets:
            pos = offset + m_len if m_start >= 0 and offset > m_start else offset
            after.append(text.integrated.sticky_index(txn._txn, pos, Assoc.AFTER) if pos < total else None)
            before.append(text.integrated.sticky_index(txn._txn, pos, Assoc.BEFORE) if pos > 0 else None)
    return Snapshot(path, lines, "\r\n" in raw_text, after, before)


@dataclass(frozen=True)
class Replacement:
    """Snapshot lines [first, last) (0-based) become `lines`."""

    first: int
    last: int
    lines: list[str]


def replacements(snapshot: Snapshot, new_text: str) -> list[Replacement]:
    """Line-range replacements that turn the snapshot's text into new_text ("\n" ends)."""
    if snapshot.crlf:
        new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    old, new = snapshot.raw_lines, split_keepends(new_text)
    result = []
    for hunk in compute_hunks(old, new, context=0):
        for tag, i1, i2, j1, j2 in hunk.opcodes:
            if tag != "equal":
                result.append(Replacement(i1, i2, new[j1:j2]))
    return result


def _resolve(index: Any, txn: Any, fallback: int) -> int:
    return fallback if index is None else index.get_offset(txn._txn)


@dataclass(frozen=True)
class _Span:
    gap: int  # where the line before the target ends (text between gap and start was typed since)
    start: int
    end: int


def apply_edit(snapshot: Snapshot, text: Text, new_text: str, mask: Mask | None = None) -> list[Replacement]:
    """Turn the snapshot's text into new_text in the live text, in one transaction.

    Raises ConflictError (nothing applied) when someone changed a target range meanwhile.
    """
    todo = replacements(snapshot, new_text)
    if not todo:
        return []
    with text.doc.transaction() as txn:
        raw = str(text).encode("utf-8")
        clean, m_start, m_len = _unmasked(raw, mask() if mask else None)
        spans = [_locate(snapshot, r, txn, len(raw), m_start, m_len) for r in todo]
        for replacement, span in zip(todo, spans):
            _check(snapshot, replacement, clean, span)
        if m_start >= 0:
            del text[m_start : m_start + m_len]
        for replacement, span in sorted(zip(todo, spans), key=lambda pair: -pair[1].start):
            if span.end > span.start:
                del text[span.start : span.end]
            if replacement.lines:
                text.insert(span.start, "".join(replacement.lines))
    return todo


def _locate(snapshot: Snapshot, r: Replacement, txn: Any, total: int, m_start: int, m_len: int) -> _Span:
    """Where a replacement's range is now (byte offsets in the text without the mask)."""
    last = len(snapshot.raw_lines)
    ends_with_newline = last > 0 and snapshot.raw_lines[-1].endswith("\n")
    gap = _resolve(snapshot._before[r.first], txn, 0)
    if r.first == last:  # appending after the last line
        start = gap if ends_with_newline or last == 0 else total
    else:
        start = _resolve(snapshot._after[r.first], txn, total)
    if r.first == r.last:
        end = start
    elif r.last < last or ends_with_newline:
        end = _resolve(snapshot._before[r.last], txn, total)
    else:
        end = total  # the last line has no newline: whatever was appended to it belongs to it
    if m_start >= 0:
        gap, start, end = (x - m_len if x > m_start else x for x in (gap, start, end))
    return _Span(min(gap, start), start, max(start, end))


def _check(snapshot: Snapshot, r: Replacement, clean: bytes, span: _Span) -> None:
    if r.first == r.last:
        return  # an insertion between lines conflicts with nothing
    expected = "".join(snapshot.raw_lines[r.first : r.last]).encode("utf-8")
    typed_before = clean[span.gap : span.start]
    if clean[span.start : span.end] == expected and (not typed_before or typed_before.endswith(b"\n")):
        return
    where = f"line {r.first + 1}" if r.last == r.first + 1 else f"lines {r.first + 1}-{r.last}"
    raise ConflictError(
        f"{snapshot.path}: {where} changed since you read the file (someone is editing it); "
        "re-read the file and make the edit again"
    )
