"""What of a shared document the model is shown: numbered lines, windowed when the text is long.

Up to about 24,000 characters the whole document is shown. Beyond that, a window of about 12,000
characters on each side of the prompt, cut at line boundaries (partial lines are dropped, the
prompt line never), with line numbers that stay true to the whole document.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.oct.textpos import line_of, line_starts

WINDOW_LIMIT = 24_000
WINDOW_SIDE = 12_000


@dataclass(frozen=True)
class DocumentView:
    path: str
    body: str  # the numbered lines
    first_line: int  # 1-based, inclusive
    last_line: int  # 1-based, inclusive
    total_lines: int
    windowed: bool

    def header(self) -> str:
        if not self.windowed:
            return f"{self.path} ({self.total_lines} lines)"
        return (
            f"{self.path} (lines {self.first_line}-{self.last_line} of {self.total_lines}; "
            "the rest is not shown: read it with the file tools if you need it)"
        )


def number_lines(lines: list[str], first: int, total: int | None = None) -> str:
    """Lines prefixed with their 1-based numbers, right-aligned, tab-separated."""
    width = len(str(total or first + len(lines) - 1))
    return "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, start=first))


def window_lines(
    text: str, focus: int, limit: int = WINDOW_LIMIT, side: int = WINDOW_SIDE
) -> tuple[int, int]:
    """0-based [first, last) lines to show around string index focus."""
    starts = line_starts(text)
    total = len(starts)
    if len(text) <= limit:
        return 0, total
    focus = max(0, min(focus, len(text)))
    focus_line = line_of(starts, focus)
    lo, hi = max(0, focus - side), min(len(text), focus + side)
    first = line_of(starts, lo)
    if starts[first] < lo:
        first += 1  # drop the partial first line
    last = line_of(starts, hi)  # the line holding hi is partial unless hi ends the text
    if hi >= len(text):
        last = total
    first = min(first, focus_line)
    last = max(last, focus_line + 1)
    return first, last


def view_document(path: str, text: str, focus: int) -> DocumentView:
    """The numbered (and, for long texts, windowed) view of text around string index focus."""
    lines = text.split("\n")
    first, last = window_lines(text, focus)
    shown = [line.removesuffix("\r") for line in lines[first:last]]
    return DocumentView(
        path=path,
        body=number_lines(shown, first + 1, len(lines)),
        first_line=first + 1,
        last_line=last,
        total_lines=len(lines),
        windowed=(first, last) != (0, len(lines)),
    )
