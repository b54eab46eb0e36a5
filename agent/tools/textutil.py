"""Line bookkeeping shared by the file and line tools (1-based, inclusive line numbers)."""

from __future__ import annotations

import difflib

MAX_LINES_SHOWN = 2000
MAX_CHARS_SHOWN = 60_000
MAX_LINE_CHARS = 2000


def human_size(size: int) -> str:
    """A byte count as a person reads it: 512 B, 3.4 KB, 1.2 MB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def text_size(text: str) -> str:
    """The size of a text as UTF-8 (seed 003's read/write results carry sizes)."""
    return human_size(len(text.encode("utf-8", "surrogatepass")))


def line_count(count: int) -> str:
    """`1 line`, `2 lines`: a count of lines as a sentence says it."""
    return f"{count} line" if count == 1 else f"{count} lines"


def to_lines(text: str) -> tuple[list[str], bool]:
    """The lines of a text and whether it ends with a newline."""
    if text == "":
        return [], False
    trailing = text.endswith("\n")
    return (text[:-1] if trailing else text).split("\n"), trailing


def from_lines(lines: list[str], trailing: bool) -> str:
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if trailing else "")


def content_lines(content: str) -> list[str]:
    """Lines of tool-supplied content, given with or without a final newline."""
    if content == "":
        return []
    return (content[:-1] if content.endswith("\n") else content).split("\n")


def number(lines: list[str], first: int) -> str:
    """Lines prefixed with their numbers, as the model sees them everywhere."""
    out = []
    for offset, line in enumerate(lines):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" … [line cut: {len(line)} characters]"
        out.append(f"{first + offset:>6}\t{line}")
    return "\n".join(out)


def window(lines: list[str], start: int, end: int | None) -> tuple[int, int, str | None]:
    """Clamp a requested range for display; returns (start, end, note about paging)."""
    count = len(lines)
    end = count if end is None else min(end, count)
    shown_end, size = start - 1, 0
    while shown_end < end and shown_end - (start - 1) < MAX_LINES_SHOWN:
        size += len(lines[shown_end]) + 8
        if size > MAX_CHARS_SHOWN and shown_end > start - 1:
            break
        shown_end += 1
    note = None
    if shown_end < end:
        note = (f"[showing lines {start}-{shown_end} of {count}; call again with "
                f"start_line={shown_end + 1} to continue]")
    return start, shown_end, note


# The closest-match search compares at most this much text in all, so a huge old_text that
# matches nothing costs a fraction of a second, not minutes.
MAX_PROBE_LINES = 40
MAX_PROBE_CHARS = 4000
MAX_CANDIDATES = 2000
MAX_COMPARED_CHARS = 1_500_000


def closest_lines(text: str, wanted: str, limit: int = 12) -> str:
    """The stretch of text most similar to `wanted`, with line numbers, for error messages."""
    lines, _ = to_lines(text)
    target = content_lines(wanted)
    if not lines or not target:
        return "(the file is empty)" if not lines else ""
    size = min(len(target), MAX_PROBE_LINES)
    probe = target[0].strip()[:20]
    candidates = [i for i, line in enumerate(lines) if probe and probe in line] or range(len(lines))
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(_excerpt(target, 0, size))  # analysed once, compared with every candidate
    best, best_ratio, budget = 0, -1.0, MAX_COMPARED_CHARS
    for i in candidates[:MAX_CANDIDATES]:
        window = _excerpt(lines, i, size)
        budget -= len(window)
        if budget < 0:
            break
        matcher.set_seq1(window)
        ratio = matcher.quick_ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    shown = lines[best : best + min(size, limit)]
    return number(shown, best + 1)


def _excerpt(lines: list[str], start: int, count: int) -> str:
    return "\n".join(line[:MAX_PROBE_CHARS] for line in lines[start : start + count])[:MAX_PROBE_CHARS]


def occurrences(text: str, needle: str) -> list[int]:
    """Character offsets of every (non-overlapping) occurrence."""
    found, start = [], 0
    while True:
        index = text.find(needle, start)
        if index < 0:
            return found
        found.append(index)
        start = index + max(1, len(needle))


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
