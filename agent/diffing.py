"""Line diffs: hunks, unified diff text, and applying a chosen subset of hunks.

The hunks here are the same ones the unified diff shows (difflib's grouped opcodes with three
lines of context), so a front end can number them and the loop can apply only the accepted ones.
A common prefix and suffix are stripped before diffing, which keeps a small edit to a 100,000-line
file in the low milliseconds.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class Hunk:
    """One hunk: opcodes over old/new line indices (0-based, end exclusive)."""

    opcodes: tuple[Opcode, ...]

    @property
    def old_start(self) -> int:
        return self.opcodes[0][1]

    @property
    def old_end(self) -> int:
        return self.opcodes[-1][2]

    @property
    def new_start(self) -> int:
        return self.opcodes[0][3]

    @property
    def new_end(self) -> int:
        return self.opcodes[-1][4]


@dataclass
class FileChange:
    """A whole-file change: `old` None creates the file, `new` None deletes it.

    `old` is the text the change was computed from (its base); a workspace refuses to apply a
    change whose base no longer matches what is there.
    """

    path: str
    old: str | None
    new: str | None
    reason: str = ""
    _hunks: list[Hunk] | None = field(default=None, repr=False, compare=False)

    @property
    def created(self) -> bool:
        return self.old is None

    @property
    def deleted(self) -> bool:
        return self.new is None

    def hunks(self) -> list[Hunk]:
        if self._hunks is None:
            self._hunks = compute_hunks(split_lines(self.old or ""), split_lines(self.new or ""))
        return self._hunks

    def unified_diff(self) -> str:
        return unified_diff(self.old, self.new, self.path, hunks=self.hunks())

    def changed_lines(self) -> tuple[int, int]:
        """1-based inclusive line range in the new text that the change touches."""
        hunks = self.hunks()
        if not hunks:
            return (0, 0)
        start = min(_first_change(h)[1] for h in hunks) + 1
        end = max(_last_change(h)[1] for h in hunks)
        return (start, max(start, end))


def split_lines(text: str) -> list[str]:
    """Split keeping line ends, so joining gives the text back exactly."""
    return text.splitlines(keepends=True)


def _first_change(h: Hunk) -> tuple[int, int]:
    for tag, i1, _i2, j1, _j2 in h.opcodes:
        if tag != "equal":
            return (i1, j1)
    return (h.old_start, h.new_start)


def _last_change(h: Hunk) -> tuple[int, int]:
    for tag, _i1, i2, _j1, j2 in reversed(h.opcodes):
        if tag != "equal":
            return (i2, j2)
    return (h.old_end, h.new_end)


def line_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib opcodes, with a common prefix and suffix handled without difflib."""
    n_pre = 0
    limit = min(len(a), len(b))
    while n_pre < limit and a[n_pre] == b[n_pre]:
        n_pre += 1
    n_suf = 0
    while n_suf < limit - n_pre and a[len(a) - 1 - n_suf] == b[len(b) - 1 - n_suf]:
        n_suf += 1
    mid_a, mid_b = a[n_pre : len(a) - n_suf], b[n_pre : len(b) - n_suf]
    ops: list[Opcode] = []
    if n_pre:
        ops.append(("equal", 0, n_pre, 0, n_pre))
    if mid_a or mid_b:
        matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ops.append((tag, i1 + n_pre, i2 + n_pre, j1 + n_pre, j2 + n_pre))
    if n_suf:
        ops.append(("equal", len(a) - n_suf, len(a), len(b) - n_suf, len(b)))
    return ops


def compute_hunks(a: list[str], b: list[str], context: int = 3) -> list[Hunk]:
    """Group opcodes into hunks exactly as difflib.unified_diff does."""
    codes = line_opcodes(a, b)
    if not codes or all(tag == "equal" for tag, *_ in codes):
        return []
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    hunks: list[Hunk] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > context * 2:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            hunks.append(Hunk(tuple(group)))
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        hunks.append(Hunk(tuple(group)))
    return hunks


def _range(start: int, length: int) -> str:
    beginning = start + 1 if length else start
    return f"{beginning}" if length == 1 else f"{beginning},{length}"


def _diff_line(prefix: str, line: str) -> list[str]:
    if line.endswith("\n"):
        return [prefix + line]
    return [prefix + line + "\n", "\\ No newline at end of file\n"]


def unified_diff(
    old: str | None, new: str | None, path: str, hunks: list[Hunk] | None = None
) -> str:
    """A git-style unified diff of one file ('' when nothing changed)."""
    a, b = split_lines(old or ""), split_lines(new or "")
    if hunks is None:
        hunks = compute_hunks(a, b)
    if not hunks:
        return ""
    out = [
        f"--- {'/dev/null' if old is None else 'a/' + path}\n",
        f"+++ {'/dev/null' if new is None else 'b/' + path}\n",
    ]
    for h in hunks:
        out.append(
            f"@@ -{_range(h.old_start, h.old_end - h.old_start)} "
            f"+{_range(h.new_start, h.new_end - h.new_start)} @@\n"
        )
        for tag, i1, i2, j1, j2 in h.opcodes:
            if tag == "equal":
                for line in a[i1:i2]:
                    out.extend(_diff_line(" ", line))
                continue
            for line in a[i1:i2]:
                out.extend(_diff_line("-", line))
            for line in b[j1:j2]:
                out.extend(_diff_line("+", line))
    return "".join(out)


def apply_hunks(old: str, new: str, accepted: set[int]) -> str:
    """The text that results from applying only the accepted hunks (by index) of old→new."""
    a, b = split_lines(old), split_lines(new)
    result: list[str] = []
    pos = 0
    for index, h in enumerate(compute_hunks(a, b)):
        if index not in accepted:
            continue
        result.extend(a[pos : h.old_start])
        result.extend(b[h.new_start : h.new_end])
        pos = h.old_end
    result.extend(a[pos:])
    return "".join(result)


def count_changes(change: FileChange) -> tuple[int, int]:
    """(lines added, lines removed)."""
    added = removed = 0
    for h in change.hunks():
        for tag, i1, i2, j1, j2 in h.opcodes:
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
    return added, removed
