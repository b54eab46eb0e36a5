"""Edits that land where the model meant them, even while people keep typing.

When the model is shown a shared text we take a `Snapshot`: the text it saw and, at every line
boundary, two sticky positions (one bound to the first character of the line, one to the newline
before it; see `positions` for why these are mapped through change deltas). At edit time a
whole-file change is diffed against the snapshot into line-range replacements; each range is found again through its anchors in the current text. If the text of
a target range differs from what the model saw (someone edited those lines, or typed at the start
of the first one), the edit is refused with a request to re-read; otherwise all replacements go
into one Yjs transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from agent.diffing import compute_hunks
from agent.oct.positions import AFTER, BEFORE, Anchor, PositionLog, StaleAnchor
from agent.workspaces.base import ConflictError

_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def split_keepends(text: str) -> list[str]:
    """Lines split on "\n" only, each keeping its newline (joining gives text back)."""
    return _LINE.findall(text)


@dataclass
class Snapshot:
    """What the model saw of a shared text, anchored in the CRDT."""

    path: str
    raw_lines: list[str]  # lines as they are in the text ("\r\n" kept)
    crlf: bool
    log: PositionLog = field(repr=False)
    _after: list[Anchor] = field(repr=False)  # per boundary: bound to the next character
    _before: list[Anchor] = field(repr=False)  # per boundary: bound to the previous character

    @property
    def text(self) -> str:
        """The text the model saw ("\n" line ends)."""
        view = "".join(self.raw_lines)
        return view.replace("\r\n", "\n") if self.crlf else view


def take_snapshot(path: str, log: PositionLog) -> Snapshot:
    """Snapshot log's text now (call without awaiting in between reading and snapshotting)."""
    lines = split_keepends(str(log.text))
    boundaries = [0]
    for line in lines:
        boundaries.append(boundaries[-1] + len(line.encode("utf-8")))
    after = [log.anchor(boundary, AFTER) for boundary in boundaries]
    before = [log.anchor(boundary, BEFORE) for boundary in boundaries]
    return Snapshot(path, lines, "\r\n" in "".join(lines), log, after, before)


@dataclass(frozen=True)
class Replacement:
    """Snapshot lines [first, last) (0-based) become `lines`."""

    first: int
    last: int
    lines: list[str]


def replacements(snapshot: Snapshot, new_text: str) -> tuple[list[str], list[Replacement]]:
    """The new text's lines, and the line-range replacements that turn the snapshot's into them."""
    if snapshot.crlf:
        new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    old, new = snapshot.raw_lines, split_keepends(new_text)
    result: list[Replacement] = []
    for hunk in compute_hunks(old, new, context=0):
        for tag, i1, i2, j1, j2 in hunk.opcodes:
            if tag == "equal":
                continue
            if result and result[-1].last == i1:  # adjacent ranges share a boundary: one range
                result[-1] = Replacement(result[-1].first, i2, result[-1].lines + new[j1:j2])
            else:
                result.append(Replacement(i1, i2, new[j1:j2]))
    return new, result


@dataclass(frozen=True)
class _Span:
    gap: int  # where the line before the target ends (text between gap and start was typed since)
    start: int
    end: int


@dataclass
class PreparedEdit:
    """An edit whose target ranges were found and checked; `commit` applies it (no awaits between)."""

    snapshot: Snapshot
    new_lines: list[str]
    todo: list[Replacement]
    spans: list[_Span]

    def commit(self) -> Snapshot:
        """Apply in one transaction; returns the snapshot of the text the model now believes."""
        snap, text = self.snapshot, self.snapshot.log.text
        with text.doc.transaction():
            for replacement, span in sorted(zip(self.todo, self.spans), key=lambda pair: -pair[1].start):
                if span.end > span.start:
                    del text[span.start : span.end]
                if replacement.lines:
                    text.insert(span.start, "".join(replacement.lines))
        return _derive(snap, self.new_lines, self.todo, self.spans)


def prepare_edit(snapshot: Snapshot, new_text: str) -> PreparedEdit | None:
    """Find and check the ranges an edit replaces (None: nothing to change).

    Raises ConflictError when someone changed a target range since the snapshot.
    """
    new_lines, todo = replacements(snapshot, new_text)
    if not todo:
        return None
    raw = str(snapshot.log.text).encode("utf-8")
    try:
        spans = [_locate(snapshot, r, len(raw)) for r in todo]
    except StaleAnchor:
        raise ConflictError(f"{snapshot.path} changed a lot since you read it; re-read it") from None
    for replacement, span in zip(todo, spans):
        _check(snapshot, replacement, raw, span)
    return PreparedEdit(snapshot, new_lines, todo, spans)


def apply_edit(snapshot: Snapshot, new_text: str) -> Snapshot:
    """Check and apply in one go; returns the snapshot to use for the next edit."""
    prepared = prepare_edit(snapshot, new_text)
    return snapshot if prepared is None else prepared.commit()


def _derive(old: Snapshot, new_lines: list[str], todo: list[Replacement], spans: list[_Span]) -> Snapshot:
    """Anchors for the text after our edit: kept for untouched lines, new for the lines we wrote."""
    log, after, before = old.log, [], []
    shift, next_old = 0, 0
    for r, span in sorted(zip(todo, spans), key=lambda pair: pair[0].first):
        after += old._after[next_old : r.first]
        before += old._before[next_old : r.first]
        start = span.start + shift  # where our inserted text begins after the transaction
        sizes = [len(line.encode("utf-8")) for line in r.lines]
        offsets = [start + sum(sizes[:t]) for t in range(len(sizes) + 1)]
        before.append(old._before[r.first])
        after.append(log.anchor(start, AFTER) if r.lines else old._after[r.last])
        for offset in offsets[1:-1]:
            after.append(log.anchor(offset, AFTER))
            before.append(log.anchor(offset, BEFORE))
        if r.lines:
            after.append(old._after[r.last])
            before.append(log.anchor(offsets[-1], BEFORE))
        next_old = r.last + 1
        shift += offsets[-1] - start - (span.end - span.start)
    after += old._after[next_old:]
    before += old._before[next_old:]
    return Snapshot(old.path, new_lines, old.crlf, log, after, before)


def _locate(snapshot: Snapshot, r: Replacement, total: int) -> _Span:
    """Where a replacement's range is now (UTF-8 offsets in the text)."""
    last = len(snapshot.raw_lines)
    ends_with_newline = last > 0 and snapshot.raw_lines[-1].endswith("\n")
    gap = snapshot._before[r.first].resolve()
    if r.first == last and last > 0:  # appending after the last line
        start = gap if ends_with_newline else total
    else:
        start = snapshot._after[r.first].resolve()
    if r.first == r.last:
        end = start
    elif r.last < last or ends_with_newline:
        end = snapshot._before[r.last].resolve()
    else:
        end = total  # the last line has no newline: whatever was appended to it belongs to it
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
