"""DiffView: a scrollable, syntax-highlighted diff with a hunk cursor and per-hunk decisions.

A Line API widget: the model is flattened into rows (file header, hunk header, code line) and
`render_line` draws only the rows on screen, so a 5,000-line diff costs what one screenful does.
Highlighting is per hunk side (old text, new text) and in chunks for huge hunks, never the
whole file. Every colour is a component class in diffview.tcss, styled with theme variables,
and the caches are dropped on any style update (a theme change included).
"""

from __future__ import annotations

from pathlib import Path

from pygments.token import Token, _TokenType
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.widgets.diffmodel import (
    EMPTY, FILE, GAP, HUNK, LINE, DiffFile, DiffHunk, DiffLine, Row, display_text, hunk_sides, layout_rows,
    number_width, tokenize,
)

SPLIT_MIN_WIDTH = 120
CHUNK = 200  # lines lexed together: a huge hunk is highlighted a part at a time
NO_NEWLINE_NOTE = "  (no newline at end of file)"
_TOKENS: tuple[tuple[_TokenType, str], ...] = (
    (Token.Comment, "comment"),
    (Token.Keyword, "keyword"),
    (Token.Operator.Word, "keyword"),
    (Token.Name.Builtin, "builtin"),
    (Token.Name.Function, "name"),
    (Token.Name.Decorator, "name"),
    (Token.Name.Tag, "name"),
    (Token.Name.Class, "class"),
    (Token.Name.Attribute, "number"),
    (Token.Literal.String, "string"),
    (Token.Literal.Number, "number"),
    (Token.Error, "error"),
)


class DiffView(ScrollView, can_focus=True):
    """Renders `DiffFile`s unified or side by side, with a cursor on one hunk.

    Not `readonly`: hunks can be toggled rejected/accepted (space in the approval screen, or a
    click on a hunk header). The host binds keys to the public methods.
    """

    DEFAULT_CSS = Path(__file__).with_name("diffview.tcss").read_text(encoding="utf-8")
    COMPONENT_CLASSES = {
        *(f"diffview--{name}" for name in (
            "added", "removed", "rejected", "filler", "added-sign", "removed-sign", "line-number",
            "separator", "muted", "hunk-header", "cursor-header", "cursor", "file-header",
            "accepted", "rejected-label", "edited")),
        *(f"diffview--token-{name}" for name in (
            "comment", "keyword", "name", "class", "builtin", "string", "number", "error")),
    }

    class CursorMoved(Message):
        """The hunk cursor moved (by key, click or file jump)."""

        def __init__(self, file_index: int, hunk_index: int) -> None:
            super().__init__()
            self.file_index = file_index
            self.hunk_index = hunk_index

    class HunkToggled(Message):
        """A hunk was rejected or accepted again."""

        def __init__(self, file_index: int, hunk_index: int, rejected: bool) -> None:
            super().__init__()
            self.file_index = file_index
            self.hunk_index = hunk_index
            self.rejected = rejected

    def __init__(
        self, files: list[DiffFile] | None = None, *, readonly: bool = False, split: bool = False,
        name: str | None = None, id: str | None = None, classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.readonly = readonly
        self._split_wanted = split
        self._files: list[DiffFile] = []
        self._rejected: set[tuple[int, int]] = set()
        self._cursor: tuple[int, int] | None = None
        self._rows: list[Row] = []
        self._hunk_rows: dict[tuple[int, int], tuple[int, int]] = {}  # -> (first row, end row)
        self._side_index: dict[tuple[int, int], tuple[list[int], list[list[int]]]] = {}
        self._highlights: LRUCache[tuple[int, int, int], list[list[Segment]]] = LRUCache(256)
        self._strips: LRUCache[tuple[int, int, int], Strip] = LRUCache(1024)
        self._styles: dict[str | _TokenType, Style] = {}
        self._number_width = 3
        self._code_width = 0
        self.set_files(files or [])

    @property
    def files(self) -> list[DiffFile]:
        return list(self._files)

    @property
    def cursor(self) -> tuple[int, int] | None:
        """(file index, hunk index) of the hunk under the cursor; None when there is none."""
        return self._cursor

    @property
    def hunk_order(self) -> list[tuple[int, int]]:
        return [(fi, hunk.index) for fi, file in enumerate(self._files) for hunk in file.hunks]

    @property
    def is_split(self) -> bool:
        """Whether the side-by-side layout is showing (wanted, and the widget is wide enough)."""
        return self._split_wanted and self._content_width >= SPLIT_MIN_WIDTH

    @property
    def _content_width(self) -> int:
        # scrollbar-gutter is stable, so the vertical scrollbar's room is always taken.
        return max(0, self.size.width - self.styles.scrollbar_size_vertical)

    def is_rejected(self, file_index: int, hunk_index: int) -> bool:
        return (file_index, hunk_index) in self._rejected

    def rejected_hunks(self) -> dict[int, list[int]]:
        """File index -> sorted indices of its rejected hunks (files with none are left out)."""
        result: dict[int, list[int]] = {}
        for fi, hi in sorted(self._rejected):
            result.setdefault(fi, []).append(hi)
        return result

    def set_files(self, files: list[DiffFile]) -> None:
        self._files = list(files)
        self._rejected.clear()
        order = self.hunk_order
        # A read-only diff has no decisions to make, so no hunk is singled out.
        self._cursor = order[0] if order and not self.readonly else None
        self._files_changed()

    def replace_file(self, index: int, file: DiffFile) -> None:
        """Swap one file's diff (after the user edited it): its hunk decisions start over."""
        self._files[index] = file
        self._rejected = {key for key in self._rejected if key[0] != index}
        self._cursor = (index, 0) if file.hunks else next(iter(self.hunk_order), None)
        self._files_changed()
        self._scroll_to_cursor()

    def toggle_hunk(self, file_index: int | None = None, hunk_index: int | None = None) -> bool:
        """Reject an accepted hunk or accept a rejected one (the cursor's by default)."""
        key = self._cursor if file_index is None or hunk_index is None else (file_index, hunk_index)
        if self.readonly or key is None:
            return False
        self._rejected.symmetric_difference_update({key})
        self._invalidate()
        self.post_message(self.HunkToggled(key[0], key[1], key in self._rejected))
        return True

    def move_cursor(self, delta: int) -> bool:
        """Move to the next (1) or previous (-1) hunk across files; False at either end."""
        order = self.hunk_order
        if self._cursor is None or not order:
            return False
        position = order.index(self._cursor) + delta
        if not 0 <= position < len(order):
            return False
        self._set_cursor(order[position])
        return True

    def goto_file(self, index: int) -> None:
        """Put the cursor on a file's first hunk and show its header."""
        if self._files[index].hunks:
            self._set_cursor((index, 0))
        for y, row in enumerate(self._rows):
            if row.kind == FILE and row.file == index:
                self.scroll_to(y=y, animate=False)
                break

    def toggle_split(self) -> bool:
        """Switch unified/split; returns False (and says why) if too narrow for split."""
        if not self._split_wanted and self._content_width < SPLIT_MIN_WIDTH:
            self.notify(f"Split view needs at least {SPLIT_MIN_WIDTH} columns; staying unified.",
                        severity="warning")
            return False
        self._split_wanted = not self._split_wanted
        self._rebuild()
        self._scroll_to_cursor()
        return True

    def _set_cursor(self, key: tuple[int, int]) -> None:
        self._cursor = key
        self._invalidate()
        self._scroll_to_cursor()
        self.post_message(self.CursorMoved(*key))

    def _scroll_to_cursor(self) -> None:
        """Bring the whole cursor hunk into view, from its top (with its file header if first)."""
        if self._cursor is None or self._cursor not in self._hunk_rows:
            return
        start, end = self._hunk_rows[self._cursor]
        if self._cursor[1] == 0:
            start -= 1
        top, height = round(self.scroll_y), self.scrollable_content_region.height
        if start < top or end > top + height:
            self.scroll_to(y=max(0, start - 1), animate=False)

    def _files_changed(self) -> None:
        self._highlights.clear()
        self._side_index.clear()
        self._number_width = number_width(self._files)
        self._code_width = max(
            (cell_len(display_text(line.text)) + (len(NO_NEWLINE_NOTE) if line.no_newline else 0)
             for f in self._files for h in f.hunks for line in h.lines),
            default=0,
        )
        self._rebuild()

    def _rebuild(self) -> None:
        self._rows, self._hunk_rows = layout_rows(self._files, self.is_split)
        self._update_virtual_size()
        self._invalidate()

    def _code_columns(self) -> int:
        """Cells left for code in one column of the current layout."""
        number = self._number_width
        if self.is_split:
            return (self._content_width - 2) // 2 - number - 3
        return self._content_width - 2 * number - 5

    def _update_virtual_size(self) -> None:
        # Horizontal scrolling moves only the code, so the scroll range is what the code overflows.
        overflow = max(0, self._code_width + 1 - self._code_columns())
        self.virtual_size = Size(self._content_width + overflow, len(self._rows))

    def _invalidate(self) -> None:
        self._strips.clear()
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._rebuild()  # the width may have crossed the split threshold

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._highlights.clear()
        self._invalidate()

    def _style(self, name: str) -> Style:
        """A component's full style (background included), for whole rows and labels."""
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(f"diffview--{name}")
        return style

    def _fg(self, name: str) -> Style:
        """A component's style without its background, so the row's own background shows."""
        style = self._styles.get(f"fg:{name}")
        if style is None:
            full = self._style(name)
            style = Style(color=full.color, bold=full.bold, italic=full.italic, underline=full.underline)
            self._styles[f"fg:{name}"] = style
        return style

    def _token_style(self, token: _TokenType) -> Style:
        style = self._styles.get(token)
        if style is None:
            name = next((name for kind, name in _TOKENS if token in kind), None)
            style = self._styles[token] = self._fg(f"token-{name}") if name else Style()
        return style

    def _code(self, fi: int, hunk: DiffHunk, li: int) -> list[Segment]:
        """Highlighted segments of one line, lexed with its side of the hunk in chunks."""
        line = hunk.lines[li]
        if (fi, hunk.index) not in self._side_index:
            self._side_index[(fi, hunk.index)] = hunk_sides(hunk)
        positions, lists = self._side_index[(fi, hunk.index)]
        # Context is lexed with the new text; removed lines with the old text they belong to.
        side = int(line.tag == "removed")
        position = positions[li]
        chunk = position // CHUNK
        key = (fi, hunk.index * 2 + side, chunk)
        lines = self._highlights.get(key)
        if lines is None:
            indices = lists[side][chunk * CHUNK : (chunk + 1) * CHUNK]
            texts = [display_text(hunk.lines[i].text) for i in indices]
            lines = self._highlights[key] = [
                [Segment(text, self._token_style(token)) for token, text in tokens]
                for tokens in tokenize(self._files[fi].path, texts)
            ]
        segments = lines[position % CHUNK]
        if line.no_newline:
            segments = [*segments, Segment(NO_NEWLINE_NOTE, self._fg("muted"))]
        return segments

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self._content_width
        base = self.visual_style.rich_style
        if index >= len(self._rows):
            return Strip.blank(width, base)
        key = (index, scroll_x, width)
        strip = self._strips.get(key)
        if strip is None:
            segments, fill = self._render_row(self._rows[index], scroll_x)
            strip = self._strips[key] = Strip(segments).apply_style(base).crop_extend(0, width, fill or base)
        return strip

    def _render_row(self, row: Row, scroll_x: int) -> tuple[list[Segment], Style | None]:
        """A row's segments, and the style that fills the rest of its width (None: plain)."""
        if row.kind == FILE:
            return self._file_row(row.file), self._style("file-header")
        if row.kind == HUNK:
            current = (row.file, row.hunk) == self._cursor
            header = self._style("cursor-header" if current else "hunk-header")
            return self._hunk_row(row.file, row.hunk, header), header
        if row.kind == EMPTY:
            return [Segment("   no changes: the new text is the same as the old", self._style("muted"))], None
        if row.kind == GAP:
            return [], None
        marker = Segment("▌" if (row.file, row.hunk) == self._cursor else " ", self._style("cursor"))
        hunk = self._files[row.file].hunks[row.hunk]
        columns = self._code_columns()
        if row.kind == LINE:
            return [marker, *self._cell(row.file, hunk, row.left, "both", columns, scroll_x)], None
        separator = Segment("│", self._style("separator"))
        return [
            marker, *self._cell(row.file, hunk, row.left, "old", columns, scroll_x),
            separator, *self._cell(row.file, hunk, row.right, "new", columns, scroll_x),
        ], None

    def _cell(
        self, fi: int, hunk: DiffHunk, li: int | None, side: str, columns: int, scroll_x: int
    ) -> list[Segment]:
        """Numbers, sign and code of one line, on its background ('both' = unified)."""
        number = self._number_width
        if li is None:
            return [Segment(" " * (number + 3 + columns), self._style("filler"))]
        line = hunk.lines[li]
        rejected = (fi, hunk.index) in self._rejected
        background, sign, sign_style = self._line_look(line, rejected)
        numbers = {"old": [line.old_no], "new": [line.new_no], "both": [line.old_no, line.new_no]}[side]
        number_style = sign_style if line.tag != "context" else self._fg("line-number")
        gutter = [Segment(f"{'' if n is None else n:>{number}} ", number_style) for n in numbers]
        code = Strip(self._code(fi, hunk, li)).crop_extend(scroll_x, scroll_x + columns, None)
        if rejected:
            code = code.apply_style(Style(dim=True, strike=line.tag != "context"))
        return list(Segment.apply_style([*gutter, Segment(f"{sign} ", sign_style), *code], background))

    def _line_look(self, line: DiffLine, rejected: bool) -> tuple[Style, str, Style]:
        """Background, sign and sign style of a line; a rejected hunk is greyed out."""
        background, sign, sign_style = {
            "context": (Style(), " ", "line-number"), "added": (self._style("added"), "+", "added-sign"),
            "removed": (self._style("removed"), "-", "removed-sign"),
        }[line.tag]
        if rejected:
            background = self._style("rejected") + Style(dim=True)
        return Style(bgcolor=background.bgcolor, dim=background.dim), sign, self._fg(sign_style)

    def _hunk_row(self, fi: int, hi: int, header: Style) -> list[Segment]:
        hunk = self._files[fi].hunks[hi]
        current = (fi, hi) == self._cursor
        on = Style(bgcolor=header.bgcolor)
        label = f" {hunk.header}{display_text(hunk.section)}  hunk {hi + 1}/{len(self._files[fi].hunks)} "
        segments = [Segment("▌" if current else " ", self._style("cursor")), Segment(label, header)]
        if self.readonly:
            return segments
        if (fi, hi) in self._rejected:
            segments.append(Segment(" ✗ rejected ", self._style("rejected-label")))
        else:
            segments.append(Segment(" ✓ accepted", self._fg("accepted") + on))
        if current:
            segments.append(Segment("   space or click toggles", self._fg("muted") + on))
        return segments

    def _file_row(self, fi: int) -> list[Segment]:
        file = self._files[fi]
        style = self._style("file-header")
        on = Style(bgcolor=style.bgcolor)
        mark = "new file" if file.created else "deleted" if file.deleted else ""
        segments = [
            Segment(" ▍" if self._cursor and self._cursor[0] == fi else "  ", self._fg("cursor") + on),
            Segment(f"{display_text(file.path)}  ", style),
            Segment(f"+{file.added}", self._fg("added-sign") + on),
            Segment(" ", style),
            Segment(f"-{file.removed}", self._fg("removed-sign") + on),
        ]
        if mark:
            segments.append(Segment(f"  {mark}", self._fg("muted") + on))
        if file.edited:
            segments.append(Segment("  ✎ edited by you", self._fg("edited") + on))
        return segments

    def on_click(self, event: events.Click) -> None:
        """A click on a hunk header toggles it; anywhere in a hunk puts the cursor there."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = round(self.scroll_y) + offset.y
        if not 0 <= index < len(self._rows):
            return
        row = self._rows[index]
        if row.kind == FILE:
            self.goto_file(row.file)
        elif row.hunk >= 0:
            if (row.file, row.hunk) != self._cursor:
                self._set_cursor((row.file, row.hunk))
            if row.kind == HUNK:
                self.toggle_hunk(row.file, row.hunk)
