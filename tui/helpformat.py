"""`--help` descriptions and epilogs laid out for the terminal's width.

argparse's raw formatter keeps hand-wrapped text as written: lines of about 100 columns, which an
80-column terminal broke wherever they ran out. This one keeps the text as written while it fits;
at a narrower width it fills a paragraph of prose (lines at the margin) again, and wraps a longer
indented line (a row of a table such as "  coder-tui run PROMPT   run the agent ...") under its
second column.
"""

from __future__ import annotations

import argparse
import re
import textwrap

_GAP = re.compile(r"(?<=\S) {2,}(?=\S)")  # two or more spaces between columns
_NARROWEST = 20  # columns a wrapped line keeps at least; a deeper hanging indent starts at the first's


class WrappedRawHelp(argparse.RawDescriptionHelpFormatter):
    def _fill_text(self, text: str, width: int, indent: str) -> str:
        width -= len(indent)
        lines = text.splitlines()
        if all(len(line) <= width for line in lines):
            return super()._fill_text(text, width + len(indent), indent)
        laid_out: list[str] = []
        prose: list[str] = []
        for line in [*lines, ""]:
            if line and not line[0].isspace():
                prose.append(line)
                continue
            laid_out.extend(_prose(prose, width))
            prose = []
            laid_out.extend(_row(line, width))
        return "\n".join(indent + line if line else "" for line in laid_out[:-1])


def _prose(lines: list[str], width: int) -> list[str]:
    """A paragraph as written if it fits, else filled again."""
    if all(len(line) <= width for line in lines):
        return lines
    return textwrap.wrap(" ".join(lines), width, break_on_hyphens=False, break_long_words=False)


def _row(line: str, width: int) -> list[str]:
    """An indented line as written if it fits, else wrapped under its second column (or its indent)."""
    if len(line) <= width:
        return [line]
    lead = len(line) - len(line.lstrip())
    gaps = list(_GAP.finditer(line, lead))  # the widest gap is before the description column
    hang = max(gaps, key=lambda gap: gap.end() - gap.start()).end() if gaps else lead
    if width - hang < _NARROWEST:
        hang = lead
    return textwrap.wrap(line, width, subsequent_indent=" " * hang, break_on_hyphens=False,
                         break_long_words=False, drop_whitespace=True)
