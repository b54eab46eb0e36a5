"""Positions that stick to the text while it changes: sticky indices mapped through change deltas.

Yjs expresses this with relative positions bound to items. pycrdt 0.14 exposes them as
`StickyIndex`, but for texts holding non-ASCII characters it mixes units (UTF-8 bytes for whole
items, UTF-16 units inside an item) and panics at the end of a text, so positions drift or crash
as soon as someone types "é" above them. The same semantics follow from the change deltas pycrdt
reports for every transaction, local and remote, in one unit (UTF-8 bytes): an anchor `AFTER` is
bound to the character on its right (text inserted exactly at it goes before it), an anchor
`BEFORE` to the character on its left, and an anchor whose character is deleted collapses to where
the deletion happened. `PositionLog` records the deltas of one text; anchors map forward lazily.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pycrdt import Text, TextEvent

AFTER, BEFORE = 0, -1
MAX_LOG = 200_000  # deltas kept per text; older anchors must be taken again


class StaleAnchor(LookupError):
    """The anchor is older than the oldest change still remembered."""


Op = tuple[int, int]  # (kind, amount): 0 retain, 1 insert, 2 delete; amounts in UTF-8 bytes


def _ops(delta: list[dict[str, Any]]) -> list[Op]:
    ops: list[Op] = []
    for op in delta:
        if "retain" in op:
            ops.append((0, int(op["retain"])))
        elif "insert" in op:
            value = op["insert"]
            ops.append((1, len(value.encode("utf-8")) if isinstance(value, str) else 1))
        elif "delete" in op:
            ops.append((2, int(op["delete"])))
    return ops


def map_offset(offset: int, assoc: int, ops: list[Op]) -> int:
    """Where offset (before the change) is after the change described by ops."""
    old = new = 0
    for kind, amount in ops:
        if kind == 0:
            if offset < old + amount:
                return new + offset - old
            old += amount
            new += amount
        elif kind == 1:
            if offset == old and assoc == BEFORE:
                return new
            new += amount
        else:
            if old <= offset < old + amount:
                return new
            old += amount
    return new + offset - old


class PositionLog:
    """Every change of one text since we started watching it."""

    def __init__(self, text: Text) -> None:
        self.text = text
        self._changes: list[list[Op]] = []
        self._base = 0  # sequence number of _changes[0]
        self._subscription = text.observe(self._record)

    @property
    def now(self) -> int:
        return self._base + len(self._changes)

    def _record(self, event: TextEvent) -> None:
        try:
            ops = _ops(list(event.delta))
        except (TypeError, ValueError, KeyError):  # unreadable change: every older anchor is stale now
            self._base += len(self._changes) + 1
            self._changes.clear()
            return
        self._changes.append(ops)
        if len(self._changes) > MAX_LOG:
            drop = len(self._changes) - MAX_LOG
            del self._changes[:drop]
            self._base += drop

    def anchor(self, offset: int, assoc: int = AFTER) -> Anchor:
        """An anchor at UTF-8 byte offset `offset` of the text as it is now."""
        return Anchor(self, offset, assoc, self.now)

    def map(self, offset: int, assoc: int, since: int) -> int:
        if since < self._base:
            raise StaleAnchor("the text changed too much since this position was taken")
        for ops in self._changes[since - self._base :]:
            offset = map_offset(offset, assoc, ops)
        return offset


@dataclass
class Anchor:
    log: PositionLog
    offset: int  # UTF-8 bytes, at sequence `seq`
    assoc: int
    seq: int

    def resolve(self) -> int:
        """The anchor's UTF-8 byte offset in the text now (and remember it, to map less later)."""
        offset = self.log.map(self.offset, self.assoc, self.seq)
        self.offset, self.seq = offset, self.log.now
        return offset
