"""The conversation: user prompts, streamed Markdown answers, compact tool rows and notices.

Tokens arrive far faster than Markdown can re-render (Textual's Markdown keeps up with about 20
appends a second), so answers buffer their text and one transcript-wide timer flushes every
streaming answer at most 20 times a second (twice a second while the user types, so their keys
echo first). Finished answers are never parsed again: earlier turns, and the drawn parts of a long
answer, live in one HistoryView.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from weakref import WeakSet

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from agent.lsp.report import reports_errors
from agent.textsafe import visible
from tui.widgets.history import Block, HistoryView
from tui.widgets.release import remove_released
from tui.widgets.spinner import SPINNER

if TYPE_CHECKING:
    from tui.widgets.answer import AssistantMessage
    from tui.widgets.reasoning import ReasoningBlock

OUTPUT_LINES = 400  # lines of a tool's output shown when expanded
# Within TYPING_HOLD seconds of a key press, a streamed answer is appended (and the screen
# re-laid out) only every TYPING_FLUSH_INTERVAL seconds instead of 20 times a second.
TYPING_HOLD = 0.2
TYPING_FLUSH_INTERVAL = 0.5


class UserMessage(Static):
    """What the user (or, in a room, someone in the room) asked."""

    DEFAULT_CSS = """
    UserMessage {
        margin-top: 1;
        padding: 0 1;
        border-left: thick $primary;
        background: $surface;
    }
    """

    def __init__(self, text: str, who: str = "you") -> None:
        body = Text(who, style="bold") + Text("\n") + Text(text)
        super().__init__(body)
        self.message, self.who = text, who


class ToolRow(Widget, can_focus=True):
    """One tool call: status icon, tool, key argument, duration; Enter or a click shows output."""

    DEFAULT_CSS = """
    ToolRow {
        height: auto;
        padding: 0 0 0 1;
        color: $text-muted;
        &:focus { background: $boost; color: $text; }
        &.-running { color: $text; }
        &.-error .tool-line { color: $error; }
        & .tool-output {
            display: none;
            height: auto;
            max-height: 20;
            overflow-y: auto;
            margin: 0 0 0 2;
            padding: 0 1;
            background: $surface;
            color: $text;
        }
        &.-expanded .tool-output { display: block; }
        & .tool-preview { display: none; height: auto; margin: 0 0 0 2; padding: 0 1; color: $text-muted; }
        &.-preview .tool-preview { display: block; }
        &.-expanded .tool-preview { display: none; }
    }
    """

    BINDINGS = [Binding("enter,space", "toggle", "Show output", id="transcript.toggle_output")]

    def __init__(self, call_id: str, tool: str, key: str) -> None:
        super().__init__(classes="-running")
        self.call_id, self.tool, self.key = call_id, tool, key
        self.ok: bool | None = None
        self.duration = 0.0
        self.body = ""
        self.frame = 0
        self.note = ""  # e.g. "waiting for approval", "+3 -1"
        self.preview = ""  # a command's last lines of output, shown while the row is folded

    def compose(self) -> ComposeResult:
        yield Static(self._line(), classes="tool-line", markup=False)
        yield Static("", classes="tool-preview", markup=False)
        yield Static("", classes="tool-output", markup=False)

    def _line(self) -> Text:
        if self.ok is None:
            icon = Text(SPINNER[self.frame % len(SPINNER)], style="bold")
        else:
            icon = Text("✓" if self.ok else "✗", style="bold")
        line = icon + Text(f" {self.tool}", style="bold")
        if self.key:
            line += Text(f"  {_one_line(self.key)}")
        if self.note:
            line += Text(f"  {self.note}", style="italic")
        if self.ok is not None:
            line += Text(f"  {self.duration:.2f}s", style="dim")
        return line

    def refresh_line(self) -> None:
        # Not `if self.is_mounted`: a fast tool's result comes after compose made the line but
        # before the row counts as mounted, and the spinner frame stayed (before compose, there
        # is nothing to update: compose draws the current line).
        for line in self.query(".tool-line").results(Static):
            line.update(self._line())

    def tick(self) -> None:
        self.frame += 1
        self.refresh_line()

    def finish(self, ok: bool, body: str, duration: float, note: str | None = None, preview: str = "") -> None:
        """`note` (e.g. "exit 1", "denied: …"): by default, for a failure, its message cut at a word."""
        from tui.toolresult import shorten

        self.ok, self.body, self.duration = ok, body, duration
        self.set_class(False, "-running")
        self.set_class(not ok, "-error")
        self.note = note if note is not None else "" if ok else shorten(body)
        self.preview = preview
        self.set_class(bool(preview), "-preview")
        for shown in self.query(".tool-preview").results(Static):
            shown.update(Text(preview))
        self.refresh_line()
        if self.has_class("-expanded"):
            self._show_body()

    def action_toggle(self) -> None:
        self.toggle_class("-expanded")
        if self.has_class("-expanded"):
            self._show_body()

    def on_click(self) -> None:
        self.action_toggle()

    def _show_body(self) -> None:
        lines = self.body.splitlines() or ["(no output yet)" if self.ok is None else "(no output)"]
        shown = "\n".join(lines[:OUTPUT_LINES])
        if len(lines) > OUTPUT_LINES:
            shown += f"\n… {len(lines) - OUTPUT_LINES} more lines"
        self.query_one(".tool-output", Static).update(Text(shown))


class DiffBlock(Vertical):
    """A file change that landed, as a read-only diff (the same view the approval screen uses)."""

    DEFAULT_CSS = """
    DiffBlock {
        height: auto;
        margin: 0 0 0 3;
        & DiffView { height: auto; max-height: 16; }
        & .diff-diagnostics { color: $text-muted; }
        & .diff-diagnostics.-errors { color: $error; }
    }
    """

    def __init__(self, path: str, diff: str, note: str = "") -> None:
        super().__init__()
        self.path, self.diff, self.note = path, diff, note  # note: the language server's word on the file

    def compose(self) -> ComposeResult:
        from tui.widgets.diffmodel import parse_unified
        from tui.widgets.diffview import DiffView

        yield DiffView(parse_unified(self.diff, self.path), readonly=True)
        if self.note:
            problems = reports_errors(self.note)
            yield Static(Text(visible(self.note)), classes="diff-diagnostics" + (" -errors" if problems else ""))


class Notice(Static):
    """A line the user should see: an error, a retry, a stop, an undo."""

    DEFAULT_CSS = """
    Notice {
        padding: 0 0 0 1;
        margin-top: 1;
        &.-error { color: $error; text-style: bold; }
        &.-warning { color: $warning; }
        &.-success { color: $success; }
        &.-dim { color: $text-muted; margin-top: 0; }
        &.-room { color: $text-muted; text-style: italic; margin-top: 0; }
    }
    """

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(Text(text), classes=f"-{kind}")
        self.message, self.notice_kind = text, kind


class Transcript(VerticalScroll, can_focus=False):
    """The conversation column: earlier turns in one HistoryView, the latest turn as widgets."""

    def __init__(self, last_input: Callable[[], float] | None = None, **kwargs: Any) -> None:
        """`last_input`: when the user last pressed a key (time.monotonic); while they type,
        streamed text is appended less often, so their keys echo first."""
        super().__init__(**kwargs)
        self._last_input = last_input or (lambda: 0.0)
        self._last_flush = 0.0
        self.live: AssistantMessage | None = None
        self.thinking: ReasoningBlock | None = None  # the reply's reasoning, until its answer starts
        self.rows: dict[str, ToolRow] = {}
        self._timer: Any = None
        self._leaving: WeakSet[Widget] = WeakSet()  # moved into the history, removal under way

    def compose(self) -> ComposeResult:
        yield HistoryView(id="history")

    def on_mount(self) -> None:
        self.anchor()

    @property
    def history(self) -> HistoryView:
        return self.query_one(HistoryView)

    def archive(self) -> None:
        """Move the turns on screen into the history (a new prompt starts)."""
        self.end_answer()
        self.rows.clear()
        self._to_history(self._on_screen())

    def _on_screen(self) -> list[Widget]:
        """The widgets of the latest turn (not the history, not those already leaving)."""
        return [w for w in self.children if not isinstance(w, HistoryView) and w not in self._leaving]

    def _to_history(self, widgets: list[Widget]) -> None:
        self.history.extend([block for w in widgets if (block := to_block(w)) is not None])
        self._leaving.update(widgets)
        remove_released(widgets)

    # -- adding ---------------------------------------------------------------------------
    def add(self, widget: Widget) -> Widget:
        self.mount(widget)
        return widget

    def user(self, text: str, who: str = "you") -> None:
        self.archive()
        self.add(UserMessage(text, who))

    def notice(self, text: str, kind: str = "info") -> Notice:
        notice = Notice(text, kind)
        self.add(notice)
        return notice

    def reasoning(self, delta: str) -> None:
        """The model's reasoning, in a dimmed block above the answer it leads to."""
        from tui.widgets.reasoning import ReasoningBlock

        if self.thinking is None:
            self.end_answer()
            self.thinking = ReasoningBlock()
            self.add(self.thinking)
        self.thinking.feed(delta)

    def _fold_reasoning(self) -> None:
        if self.thinking is not None:
            self.thinking.fold()
            self.thinking = None

    def text(self, delta: str) -> None:
        from tui.widgets.answer import FLUSH_INTERVAL, AssistantMessage

        self._fold_reasoning()
        if self.live is None:
            self.live = AssistantMessage()
            self.add(self.live)
            if self._timer is None:
                self._timer = self.set_interval(FLUSH_INTERVAL, self._flush, name="transcript-flush")
        rest = self.live.feed(delta)
        while rest is not None:  # a long answer goes on in a new widget
            sealed, self.live = self.live, AssistantMessage(continued=True)
            self.call_later(self._settle, sealed)
            self.add(self.live)
            rest = self.live.feed(rest) if rest else None

    async def _settle(self, sealed: AssistantMessage) -> None:
        """Once a sealed part of a long answer is drawn, it and everything finished above it move
        into the history: the live widgets (and each append's re-layout) stay few however long
        the answer grows."""
        from tui.widgets.answer import AssistantMessage

        await sealed.drain()
        if sealed.parent is not self or sealed in self._leaving:
            return  # archived meanwhile (a new prompt, /clear): the turn on screen is another one
        settled = []
        for widget in self._on_screen():
            if widget is self.live or widget in self.rows.values() or to_block(widget) is None:
                break
            if isinstance(widget, AssistantMessage) and not widget.drawn:
                break
            settled.append(widget)
        self._to_history(settled)

    async def _flush(self) -> None:
        if self.live is None:
            return
        now = time.monotonic()
        if now - self._last_input() < TYPING_HOLD and now - self._last_flush < TYPING_FLUSH_INTERVAL:
            return
        self._last_flush = now
        await self.live.flush()

    def end_answer(self) -> None:
        """The answer being streamed is complete: flush it and stop the timer. A reasoning still
        open (the turn ended or was stopped before an answer) is done too: it thought."""
        self._fold_reasoning()
        live, self.live = self.live, None
        if live is not None:
            live.streaming = False
            self.call_later(live.drain)
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def stop_answer(self) -> None:
        """The user stopped the run: what the answer has not drawn yet is dropped, not drawn."""
        from tui.widgets.answer import AssistantMessage

        for answer in self.query_children(AssistantMessage):
            answer.drop_pending()
        self.end_answer()

    def tool_call(self, call_id: str, tool: str, key: str) -> ToolRow:
        self._fold_reasoning()
        self.end_answer()
        row = ToolRow(call_id, tool, key)
        self.rows[call_id] = row
        self.add(row)
        return row

    def tool_result(self, call_id: str, ok: bool, body: str, duration: float, note: str | None = None,
                    preview: str = "") -> None:
        row = self.rows.pop(call_id, None)
        if row is not None:
            row.finish(ok, body, duration, note, preview)

    def note_row(self, call_id: str, note: str) -> None:
        row = self.rows.get(call_id)
        if row is not None:
            row.note = note
            row.refresh_line()

    def tick(self) -> None:
        """Advance the spinners of running tool rows."""
        for row in self.rows.values():
            row.tick()

    def diff(self, path: str, diff: str, note: str = "") -> None:
        self.add(DiffBlock(path, diff, note))

    def clear(self) -> None:
        self._fold_reasoning()
        self.end_answer()
        self.rows.clear()
        self.history.clear()
        remove_released(self._on_screen())


def to_block(widget: Widget) -> Block | None:
    """The history block that stands for a widget of a finished turn."""
    from tui.widgets.answer import AssistantMessage
    from tui.widgets.reasoning import ReasoningBlock

    if isinstance(widget, ReasoningBlock):
        return Block("reasoning", widget.text)
    if isinstance(widget, UserMessage):
        return Block("user", widget.message, widget.who)
    if isinstance(widget, AssistantMessage):
        return Block("answer", widget.written, continued=widget.has_class("-continued"))
    if isinstance(widget, ToolRow):
        return Block("tool", widget.body, widget.tool, key=widget.key, ok=widget.ok, note=widget.note,
                     duration=widget.duration if widget.ok is not None else None, preview=widget.preview)
    if isinstance(widget, DiffBlock):
        return Block("diff", widget.diff, widget.path, note=widget.note)
    if isinstance(widget, Notice):
        return Block("notice", widget.message, widget.notice_kind)
    return None


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 100 else first[:99] + "…"
