"""Rich renderables for the blocks of earlier turns (see tui/widgets/history.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import Heading, ListItem, Markdown
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

from agent.lsp.report import reports_errors
from agent.textsafe import is_clean, line, visible

StyleOf = Callable[[str], Style]
DIFF_LINES = 40  # lines of a diff shown for an earlier turn
OUTPUT_LINES = 400  # lines of a tool's output shown when it is opened
NO_MARGIN_NOTICES = {"dim", "room"}


class _LeftHeading(Heading):
    """Headings as in the live chat: left-aligned, no box."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self.text.justify = "left"
        yield self.text


class _NumberedItem(ListItem):
    """Numbered items as in the live chat: "1. first", not Rich's "1 first"."""

    def render_number(self, console: Console, options: ConsoleOptions, number: int, last_number: int
                      ) -> RenderResult:
        width = len(str(last_number)) + 2
        lines = console.render_lines(self.elements, options.update(width=options.max_width - width), style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        for index, line in enumerate(lines):
            yield Segment(f"{number}.".rjust(width - 1) + " " if index == 0 else " " * width, style)
            yield from line
            yield Segment("\n")


class ChatMarkdown(Markdown):
    elements = {**Markdown.elements, "heading_open": _LeftHeading, "list_item_open": _NumberedItem}


class LeftBar:
    """A renderable with a bar down its left edge (the user's messages)."""

    def __init__(self, inner: RenderableType, bar: Style, background: Style) -> None:
        self.inner, self.bar, self.background = inner, bar, background

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width - 1, 1)
        for line in console.render_lines(self.inner, options.update_width(width), style=self.background, pad=True):
            yield Segment("▌", self.bar + self.background)
            yield from line
            yield Segment.line()


def markdown_theme(style_of: StyleOf) -> Theme:
    """Rich's Markdown style names, from the app's theme."""
    heading, code, link, muted = style_of("heading"), style_of("code"), style_of("link"), style_of("muted")
    styles: dict[str, Any] = {f"markdown.h{i}": heading for i in range(1, 8)}
    styles.update({"markdown.code": code, "markdown.link": link, "markdown.link_url": link,
                   "markdown.block_quote": muted, "markdown.hr": muted, "markdown.item.bullet": heading,
                   "markdown.item.number": heading, "markdown.h1.border": muted})
    return Theme(styles, inherit=True)


def shown_block(block: Any) -> Any:
    """The block with control and bidi characters made visible (a resumed session's text is as
    untrusted as a live one's)."""
    texts = {"text": block.text, "who": block.who, "key": block.key, "note": block.note, "preview": block.preview}
    if all(is_clean(value) for value in texts.values()):
        return block
    return dataclasses.replace(block, text=visible(block.text), who=line(block.who), key=line(block.key),
                               note=visible(block.note), preview=visible(block.preview))


def render_block(block: Any, style_of: StyleOf, dark: bool) -> RenderableType:
    block = shown_block(block)
    kind = block.kind
    if kind == "user":
        body = Text(block.who or "you", style="bold") + Text("\n") + Text(block.text)
        return Group(Text(""), LeftBar(Padding(body, (0, 1)), style_of("bar"), style_of("user")))
    if kind == "answer":
        markdown = ChatMarkdown(block.text, code_theme="monokai" if dark else "default")
        return markdown if block.continued else Group(Text(""), markdown)
    if kind == "tool":
        return _tool(block, style_of)
    if kind == "reasoning":
        return _reasoning(block, style_of)
    if kind == "diff":
        diff = _diff(block.who, block.text, style_of)
        if block.note:  # the language server's word on the file
            errors = reports_errors(block.note)
            diff = Group(diff, Text(block.note, style=style_of("error" if errors else "muted")))
        return Padding(diff, (0, 0, 0, 3))
    style = style_of({"error": "error", "warning": "warning", "success": "success"}.get(block.who, "muted"))
    notice = Padding(Text(block.text, style=style), (0, 0, 0, 1))
    return notice if block.who in NO_MARGIN_NOTICES else Group(Text(""), notice)


def _reasoning(block: Any, style_of: StyleOf) -> RenderableType:
    from tui.widgets.reasoning import summary

    line = Text(" " + summary(block.text, True), style=style_of("muted"))
    if not block.expanded:
        return Group(Text(""), line)
    body = Padding(Text(block.text, style=style_of("muted") + Style(italic=True)), (0, 0, 0, 3))
    return Group(Text(""), line, body)


def _tool_line(block: Any, style_of: StyleOf) -> RenderableType:
    """` ✓ name  key  note  0.12s`; a line too long for the width wraps under its icon, as the live row does."""
    icon = "✓" if block.ok else "✗" if block.ok is False else "·"
    line = Text(icon, style="bold") + Text(f" {block.who}", style="bold")
    if block.key:
        line += Text(f"  {block.key}")
    if block.note:
        line += Text(f"  {block.note}", style="italic")
    if block.duration is not None:
        line += Text(f"  {block.duration:.2f}s")
    line.stylize(style_of("error" if block.ok is False else "muted"))
    return Padding(line, (0, 0, 0, 1))


def _tool(block: Any, style_of: StyleOf) -> RenderableType:
    line = _tool_line(block, style_of)
    if not block.expanded:
        if block.preview:
            return Group(line, Padding(Text(block.preview, style=style_of("muted")), (0, 0, 0, 4)))
        return line
    lines = block.text.splitlines() or ["(no output)"]
    shown = "\n".join(lines[:OUTPUT_LINES]) + (f"\n… {len(lines) - OUTPUT_LINES} more lines"
                                               if len(lines) > OUTPUT_LINES else "")
    return Group(line, Padding(Padding(Text(shown), (0, 1), style=style_of("output"), expand=True), (0, 0, 0, 3)))


def _diff(path: str, diff: str, style_of: StyleOf) -> RenderableType:
    from tui.widgets.diffmodel import parse_unified

    grid = Table.grid(expand=True)
    grid.add_column()
    files = parse_unified(diff, path)
    shown = 0
    for file in files:
        mark = "  new file" if file.created else "  deleted" if file.deleted else ""
        grid.add_row(Text(f"{file.path}  ", style="bold") + Text(f"+{file.added}", style=style_of("added-sign"))
                     + Text(f" -{file.removed}", style=style_of("removed-sign")) + Text(mark, style=style_of("muted")))
        for hunk in file.hunks:
            grid.add_row(Text(hunk.header, style=style_of("hunk")))
            for line in hunk.lines:
                if shown == DIFF_LINES:
                    break
                shown += 1
                sign, bg = {"added": ("+", "added"), "removed": ("-", "removed")}.get(line.tag, (" ", ""))
                number = line.new_no if line.new_no is not None else line.old_no
                row = Text.assemble((f"{number or '':>4} ", style_of("muted")),
                                    (sign, style_of(f"{bg}-sign") if bg else ""), f" {line.text}")
                grid.add_row(row, style=style_of(bg) if bg else None)
    total = sum(len(h.lines) for f in files for h in f.hunks)
    if total > shown:
        grid.add_row(Text(f"… {total - shown} more lines", style=style_of("muted")))
    return grid
