"""The diff model the diff view renders: files → hunks → lines, the rows it lays them out in,
and the syntax tokens of their text.

Plain data with no Textual import, built either from a proposed `FileChange` (its hunks are the
ones the approval decision refers to by index) or by parsing unified diff text (edits that already
landed arrive only as text). Both give the same model for the same change, and `to_unified`
writes it back byte for byte, which is what the tests hold it to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, NamedTuple

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.token import _TokenType
from pygments.util import ClassNotFound

from agent.diffing import FileChange, split_lines
from agent.textsafe import line as shown_line

LineTag = Literal["context", "added", "removed"]
NO_NEWLINE = "\\ No newline at end of file"
_PREFIX: dict[str, LineTag] = {" ": "context", "+": "added", "-": "removed"}
_SIGN: dict[LineTag, str] = {"context": " ", "added": "+", "removed": "-"}
_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
TAB_SIZE = 4
# Control characters would corrupt the terminal; their Unicode pictures show instead.
_CONTROL = {**{i: 0x2400 + i for i in range(32)}, 127: 0x2421}
FILE, HUNK, LINE, PAIR, EMPTY, GAP = range(6)  # row kinds


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk. Numbers are 1-based; a side the line is not on has None."""

    tag: LineTag
    old_no: int | None
    new_no: int | None
    text: str  # without its line end
    no_newline: bool = False  # the file ends on this line without a newline


@dataclass
class DiffHunk:
    """A hunk; starts are 0-based like `agent.diffing.Hunk`, `index` is its place in the file."""

    index: int
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[DiffLine] = field(default_factory=list)
    section: str = ""  # text after the closing @@ (git's function context), kept for round trips

    @property
    def header(self) -> str:
        return f"@@ -{_range(self.old_start, self.old_len)} +{_range(self.new_start, self.new_len)} @@"

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.tag == "added")

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.tag == "removed")


@dataclass
class DiffFile:
    path: str
    hunks: list[DiffHunk] = field(default_factory=list)
    created: bool = False
    deleted: bool = False
    edited: bool = False  # the user replaced the proposal with their own version

    @property
    def added(self) -> int:
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        return sum(h.removed for h in self.hunks)


def _range(start: int, length: int) -> str:
    # Same rule as difflib: an empty range names the line before it.
    beginning = start + 1 if length else start
    return f"{beginning}" if length == 1 else f"{beginning},{length}"


def _line(tag: LineTag, raw: str, old_no: int | None, new_no: int | None) -> DiffLine:
    if raw.endswith("\n"):
        return DiffLine(tag, old_no, new_no, raw[:-1])
    return DiffLine(tag, old_no, new_no, raw, no_newline=True)


def from_change(change: FileChange) -> DiffFile:
    """The model of a proposed change, hunk for hunk as `change.hunks()` numbers them."""
    a, b = split_lines(change.old or ""), split_lines(change.new or "")
    hunks: list[DiffHunk] = []
    for index, h in enumerate(change.hunks()):
        hunk = DiffHunk(index, h.old_start, h.old_end - h.old_start, h.new_start, h.new_end - h.new_start)
        for tag, i1, i2, j1, j2 in h.opcodes:
            if tag == "equal":
                hunk.lines.extend(_line("context", a[i], i + 1, j1 + i - i1 + 1) for i in range(i1, i2))
                continue
            hunk.lines.extend(_line("removed", a[i], i + 1, None) for i in range(i1, i2))
            hunk.lines.extend(_line("added", b[j], None, j + 1) for j in range(j1, j2))
        hunks.append(hunk)
    return DiffFile(change.path, hunks, created=change.created, deleted=change.deleted)


def to_unified(file: DiffFile) -> str:
    """Unified diff text of one file ('' when it has no hunks), as `FileChange.unified_diff`."""
    if not file.hunks:
        return ""
    out = [
        f"--- {'/dev/null' if file.created else 'a/' + file.path}\n",
        f"+++ {'/dev/null' if file.deleted else 'b/' + file.path}\n",
    ]
    for hunk in file.hunks:
        out.append(f"{hunk.header}{hunk.section}\n")
        for line in hunk.lines:
            out.append(f"{_SIGN[line.tag]}{line.text}\n")
            if line.no_newline:
                out.append(NO_NEWLINE + "\n")
    return "".join(out)


def _strip_label(label: str) -> str:
    label = label.split("\t", 1)[0].rstrip()
    return label[2:] if label[:2] in ("a/", "b/") else label


class _Parser:
    """Reads unified diff text; hunk bodies are read by their line counts, not by prefixes,
    so a removed line that itself starts with '--- ' cannot be taken for a file header."""

    def __init__(self, text: str, path: str | None) -> None:
        # Only "\n" ends a diff line: a "\r" or form feed is part of the file's own text.
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.pos = 0
        self.files: list[DiffFile] = []
        self.default_path = path

    def run(self) -> list[DiffFile]:
        old_label: str | None = None
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            self.pos += 1
            if line.startswith("--- "):
                old_label = line[4:]
            elif line.startswith("+++ ") and old_label is not None:
                self._start_file(old_label, line[4:])
                old_label = None
            elif (match := _HUNK_HEADER.match(line)) is not None:
                self._read_hunk(match)
        return self.files

    def _start_file(self, old_label: str, new_label: str) -> None:
        created = old_label.startswith("/dev/null")
        deleted = new_label.startswith("/dev/null")
        path = _strip_label(old_label if deleted else new_label)
        self.files.append(DiffFile(path, created=created, deleted=deleted))

    def _read_hunk(self, match: re.Match[str]) -> None:
        if not self.files:  # hunks without file headers: the caller names the file
            self.files.append(DiffFile(self.default_path or ""))
        file = self.files[-1]
        old_len = 1 if match[2] is None else int(match[2])
        new_len = 1 if match[4] is None else int(match[4])
        old_start = int(match[1]) - (1 if old_len else 0)
        new_start = int(match[3]) - (1 if new_len else 0)
        hunk = DiffHunk(len(file.hunks), old_start, old_len, new_start, new_len, section=match[5])
        old_no, new_no = old_start + 1, new_start + 1
        # A "\ No newline" marker qualifies the line before it, and may follow the last one.
        while self.pos < len(self.lines) and (
            old_no <= old_start + old_len or new_no <= new_start + new_len or self._at_marker()
        ):
            raw = self.lines[self.pos]
            self.pos += 1
            if raw.startswith("\\"):
                if hunk.lines:
                    last = hunk.lines[-1]
                    hunk.lines[-1] = DiffLine(last.tag, last.old_no, last.new_no, last.text, True)
                continue
            # Some tools strip the space of an empty context line.
            tag = _PREFIX.get(raw[:1], "context")
            hunk.lines.append(
                DiffLine(tag, None if tag == "added" else old_no, None if tag == "removed" else new_no, raw[1:])
            )
            old_no += tag != "added"
            new_no += tag != "removed"
        file.hunks.append(hunk)

    def _at_marker(self) -> bool:
        return self.lines[self.pos].startswith("\\")


def parse_unified(text: str, path: str | None = None) -> list[DiffFile]:
    """Files of a unified diff; `path` names the file when the text has hunks but no headers."""
    return _Parser(text, path).run()


def split_pairs(hunk: DiffHunk) -> list[tuple[int | None, int | None]]:
    """Rows of the side-by-side layout as (left, right) indices into `hunk.lines`.

    Context lines sit on both sides; a run of removed lines is paired with the run of added
    lines that follows it, line by line, the longer run leaving the other side empty.
    """
    rows: list[tuple[int | None, int | None]] = []
    removed: list[int] = []
    added: list[int] = []

    def flush() -> None:
        for k in range(max(len(removed), len(added))):
            rows.append((removed[k] if k < len(removed) else None, added[k] if k < len(added) else None))
        removed.clear()
        added.clear()

    for index, line in enumerate(hunk.lines):
        if line.tag == "context":
            flush()
            rows.append((index, index))
        elif line.tag == "removed":
            if added:  # a removal after additions starts a new change block
                flush()
            removed.append(index)
        else:
            added.append(index)
    flush()
    return rows


def hunk_sides(hunk: DiffHunk) -> tuple[list[int], list[list[int]]]:
    """The hunk's lines as two texts to highlight: [new side (context and added), old side
    (removed)], as line indices, and each line's position within its side."""
    positions: list[int] = []
    sides: list[list[int]] = [[], []]
    for index, line in enumerate(hunk.lines):
        side = sides[line.tag == "removed"]
        positions.append(len(side))
        side.append(index)
    return positions, sides


class Row(NamedTuple):
    """One screen row: a file header, a hunk header, a code line (unified or a split pair),
    a "no changes" note or the gap between files."""

    kind: int
    file: int = -1
    hunk: int = -1
    left: int | None = None  # line index in the hunk (unified: the line; split: the old side)
    right: int | None = None  # split: the new side


def layout_rows(files: list[DiffFile], split: bool) -> tuple[list[Row], dict[tuple[int, int], tuple[int, int]]]:
    """The rows of a unified or split layout, and each hunk's (first row, end row)."""
    rows: list[Row] = []
    spans: dict[tuple[int, int], tuple[int, int]] = {}
    for fi, file in enumerate(files):
        if fi:
            rows.append(Row(GAP))
        rows.append(Row(FILE, fi))
        if not file.hunks:
            rows.append(Row(EMPTY, fi))
        for hunk in file.hunks:
            start = len(rows)
            rows.append(Row(HUNK, fi, hunk.index))
            if split:
                rows.extend(Row(PAIR, fi, hunk.index, a, b) for a, b in split_pairs(hunk))
            else:
                rows.extend(Row(LINE, fi, hunk.index, li) for li in range(len(hunk.lines)))
            spans[(fi, hunk.index)] = (start, len(rows))
    return rows, spans


def display_text(text: str) -> str:
    """What a code line shows: tabs expanded, a CRLF's CR dropped, control characters visible
    (C0 as their Unicode pictures, C1 and bidi characters as agent/textsafe.py shows them)."""
    return shown_line(text.removesuffix("\r").expandtabs(TAB_SIZE).translate(_CONTROL))


def number_width(files: list[DiffFile]) -> int:
    """Digits of the largest line number shown (at least 3, so small files line up too)."""
    ends = (max(h.old_start + h.old_len, h.new_start + h.new_len) for f in files for h in f.hunks)
    largest = max(ends, default=0)
    return max(3, len(str(largest)))


@lru_cache(maxsize=128)
def lexer_for(path: str) -> Lexer:
    """The Pygments lexer a file name suggests (plain text when none does)."""
    # stripnl=False: stripping leading blank lines would shift tokens onto the wrong lines.
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=True)


def tokenize(path: str, texts: list[str]) -> list[list[tuple[_TokenType, str]]]:
    """Tokens of consecutive lines, lexed as one text (so strings and comments spanning lines
    come out right) and split back into one token list per line."""
    result: list[list[tuple[_TokenType, str]]] = [[]]
    for token, value in lexer_for(path).get_tokens("\n".join(texts) + "\n"):
        for n, part in enumerate(value.split("\n")):
            if n:
                result.append([])
            if part:
                result[-1].append((token, part))
    return result[: len(texts)]
