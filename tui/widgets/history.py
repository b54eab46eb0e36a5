"""Earlier turns of the conversation, drawn by one widget.

Textual lays out every widget in the DOM on each refresh, so a transcript that kept a dozen
widgets per turn slowed down with every turn (and held megabytes per turn). When a new prompt
starts, the previous turns' widgets are replaced by blocks here: plain data, rendered with Rich
at the current width only when first needed and cached per width (one widget, whatever the
length). Answers render as Markdown, tool calls as one line (a click shows their output),
diffs in the theme's diff colours. Colours come from the theme through component classes.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from rich.style import Style
from textual.events import Click
from textual.strip import Strip
from textual.widget import Widget


@dataclass
class Block:
    """One item of an earlier turn. `kind`: user, reasoning, answer, tool, diff or notice."""

    kind: str
    text: str = ""  # user text, answer Markdown, notice text, tool output, unified diff
    who: str = ""  # user: who asked; tool: the tool's name; diff: the path; notice: its kind
    key: str = ""  # tool: key argument
    ok: bool | None = None
    duration: float | None = None
    note: str = ""
    preview: str = ""  # tool: a command's last lines of output, shown while folded
    continued: bool = False  # an answer continuing the previous block
    expanded: bool = False
    heights: dict[int, int] = field(default_factory=dict, repr=False)  # width -> lines

    def changed(self) -> None:
        self.heights.clear()


RENDERED_BLOCKS = 48  # blocks whose lines are kept; the rest are drawn again when scrolled to


class HistoryView(Widget):
    COMPONENT_CLASSES = {
        "history--bar", "history--user", "history--muted", "history--error", "history--warning",
        "history--success", "history--output", "history--added", "history--removed", "history--added-sign",
        "history--removed-sign", "history--hunk", "history--code", "history--heading", "history--link",
    }
    DEFAULT_CSS = """
    HistoryView {
        height: auto;
        & > .history--bar { color: $primary; }
        & > .history--user { background: $surface; }
        & > .history--muted { color: $foreground 60%; }
        & > .history--error { color: $error; text-style: bold; }
        & > .history--warning { color: $warning; }
        & > .history--success { color: $success; }
        & > .history--output { background: $surface; }
        & > .history--added { background: $diff-added-bg; }
        & > .history--removed { background: $diff-removed-bg; }
        & > .history--added-sign { color: $diff-added-fg; }
        & > .history--removed-sign { color: $diff-removed-fg; }
        & > .history--hunk { color: $diff-hunk-header; }
        & > .history--code { color: $accent; background: $surface; }
        & > .history--heading { color: $primary; text-style: bold; }
        & > .history--link { color: $primary; text-style: underline; }
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.blocks: list[Block] = []
        self._starts: dict[int, list[int]] = {}  # width -> first line of each block
        # (block id, width) -> its lines, least recently drawn first: memory stays bounded
        self._rendered: OrderedDict[tuple[int, int], list[Strip]] = OrderedDict()

    # -- content --------------------------------------------------------------------------
    def extend(self, blocks: list[Block]) -> None:
        if blocks:
            self.blocks.extend(blocks)
            self._starts.clear()
            self.refresh(layout=True)

    def clear(self) -> None:
        self.blocks.clear()
        self._starts.clear()
        self._rendered.clear()
        self.refresh(layout=True)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda theme: self._restyle())

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._restyle()

    def _restyle(self) -> None:
        for block in self.blocks:
            block.changed()
        self._starts.clear()
        self._rendered.clear()
        self.refresh(layout=True)

    # -- layout and drawing ---------------------------------------------------------------
    def style_of(self, name: str) -> Style:
        """Only what the component class sets (so row backgrounds show through), with its
        colour as blended against the widget's background (partial styles cannot blend)."""
        part = self.get_component_rich_style(f"history--{name}", partial=True)
        if part.color is None:
            return part
        return part + Style(color=self.get_component_rich_style(f"history--{name}").color)

    def _render(self, block: Block, width: int) -> list[Strip]:
        key = (id(block), width)
        lines = self._rendered.get(key)
        if lines is not None:
            self._rendered.move_to_end(key)
            return lines
        from tui.widgets.historyrender import markdown_theme, render_block  # Rich Markdown: off the first frame

        renderable = render_block(block, self.style_of, self.app.current_theme.dark)
        console = self.app.console
        with console.use_theme(markdown_theme(self.style_of)):
            rendered = console.render_lines(renderable, console.options.update_width(width), style=self.rich_style,
                                            pad=True)
        lines = self._rendered[key] = [Strip(line, width) for line in rendered]
        block.heights[width] = len(lines)
        while len(self._rendered) > RENDERED_BLOCKS:
            self._rendered.popitem(last=False)
        return lines

    def _height(self, block: Block, width: int) -> int:
        height = block.heights.get(width)
        return height if height is not None else len(self._render(block, width))

    def _line_starts(self, width: int) -> list[int]:
        starts = self._starts.get(width)
        if starts is None:
            starts, total = [], 0
            for block in self.blocks:
                starts.append(total)
                total += self._height(block, width)
            starts.append(total)
            self._starts = {width: starts}
        return starts

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return self._line_starts(width)[-1] if self.blocks and width > 0 else 0

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        starts = self._line_starts(width) if width > 0 else [0]
        if not self.blocks or y >= starts[-1]:
            return Strip.blank(width, self.rich_style)
        index = bisect.bisect_right(starts, y) - 1
        return self._render(self.blocks[index], width)[y - starts[index]]

    def block_at(self, y: int) -> Block | None:
        starts = self._line_starts(self.size.width)
        if not self.blocks or y < 0 or y >= starts[-1]:
            return None
        return self.blocks[bisect.bisect_right(starts, y) - 1]

    def on_click(self, event: Click) -> None:
        """A click on an earlier tool call shows (or hides) its output; on reasoning, the reasoning."""
        block = self.block_at(event.y)
        if block is not None and block.kind in ("tool", "reasoning"):
            block.expanded = not block.expanded
            block.changed()
            self._rendered.pop((id(block), self.size.width), None)
            self._starts.clear()
            self.refresh(layout=True)
