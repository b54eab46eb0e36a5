"""The prompt input: a growing multi-line box with history, slash-command and @file completion.

The completion list is a separate widget mounted on the screen as an overlay, because a TextArea
is a line-API widget that cannot hold children; it is placed right above the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Callable, NamedTuple

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Offset
from textual.message import Message
from textual.style import Style
from textual.widgets import OptionList, TextArea

from tui.appcontext import later
from tui.widgets.prompt_standin import LIST_ACTIONS, PLACEHOLDER, PROMPT_BINDINGS
from tui.widgets.prompt_support import FileIndex, PromptHistory, fuzzy_match

VISIBLE_ROWS = 10  # rows the list shows before it scrolls
_MENTION = re.compile(r"(?<!\S)@(\S+)")
_TRAILING_PUNCTUATION = ".,;:!?)]}'\""


def _highlight(text: str, positions: Iterable[int], style: Style) -> Content:
    content = Content(text)
    for position in positions:
        content = content.stylize(style, position, position + 1)
    return content


class _Context(NamedTuple):
    """What is being completed: `kind` "/" or "@", the token's start, the text typed after it."""

    kind: str
    row: int
    column: int
    query: str


class CompletionPopup(OptionList, can_focus=False):
    """The list of completions shown above the prompt; focus stays in the prompt."""

    COMPONENT_CLASSES = {"completion-popup--match", "completion-popup--detail"}

    def __init__(self, on_pick: Callable[[], None]) -> None:
        super().__init__()
        self._on_pick = on_pick

    def style_of(self, component: str) -> Style:
        return self.get_visual_style(f"completion-popup--{component}", partial=True)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        # A mouse click on a row picks it, like Tab.
        event.stop()
        self._on_pick()


class PromptInput(TextArea):
    """Where the user types to the agent. Posts `PromptInput.Submitted` on Enter."""

    DEFAULT_CSS = Path(__file__).with_name("prompt.tcss").read_text(encoding="utf-8")
    # The stylesheet also styles the completion list, which lives on the screen, not inside us.
    SCOPED_CSS = False

    BINDINGS = [
        *PROMPT_BINDINGS,
        # TextArea's Ctrl+D deletes to the right; in an empty prompt it would do nothing at all, so
        # there it is the app's Ctrl+D (the last diff), as in a shell an empty line's Ctrl+D means more.
        Binding("ctrl+d", "delete_right_or_diff", "Delete right / last diff", show=False,
                id="prompt.delete_right_or_diff"),
    ]
    _LIST_ACTIONS = LIST_ACTIONS

    class Submitted(Message):
        """The user sent `text`; `mentions` are the known files it names as `@path`."""

        def __init__(self, text: str, mentions: list[str], prompt_input: PromptInput | None = None) -> None:
            super().__init__()
            self.text = text
            self.mentions = mentions
            self.prompt_input = prompt_input

        @property
        def control(self) -> PromptInput | None:
            return self.prompt_input

    class FilesWanted(Message):
        """An `@` completion starts: the files may have changed since they were listed (the app
        lists them again, off the event loop, and calls `set_files`)."""

    def __init__(
        self,
        *,
        history_path: Path | str | None = None,
        commands: Sequence[tuple[str, str]] = (),
        placeholder: str = PLACEHOLDER,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(
            soft_wrap=True, tab_behavior="focus", show_line_numbers=False, highlight_cursor_line=False,
            placeholder=placeholder, name=name, id=id, classes=classes,
        )
        self._history = PromptHistory(Path(history_path) if history_path is not None else None)
        self._history_index: int | None = None  # None: editing the draft, not a history entry
        self._draft = ""
        # Text we set ourselves (history, `value`): it opens no list and keeps the history position.
        self._set_text: str | None = None
        self._commands = list(commands)
        self._completing: _Context | None = None  # set while completion is active
        self._inserts: list[str] = []  # text each list row puts in place of the token
        self._popup = CompletionPopup(self.action_complete)
        self._files_asked = False  # this @ completion asked for a fresh list already
        self.set_files(())

    # Public API

    @property
    def value(self) -> str:
        """The text in the box; setting it opens no completion list."""
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self._history_index = None
        self._show_text(text, cursor_at_end=True)

    @property
    def files(self) -> list[str]:
        """The workspace paths @ completes (empty until the app has listed them)."""
        return list(self._files.paths)

    @property
    def prompt_history(self) -> list[str]:
        """The sent prompts, oldest first."""
        return list(self._history.entries)

    def set_commands(self, commands: Sequence[tuple[str, str]]) -> None:
        """The commands offered after `/` (custom ones come with the session)."""
        self._commands = list(commands)

    def set_files(self, paths: Iterable[str]) -> None:
        """The workspace paths offered after `@` (and recognised as mentions); may come late."""
        self._files = FileIndex(paths)
        if self._completing is not None and self._completing.kind == "@":
            self._completing = None
            self._files_asked = True  # the fresh list: refilling the open list asks for no other
            self._refresh_completion()

    # Lifecycle and events

    def on_mount(self) -> None:
        # After the first frame: one mount and layout pass less before the app shows anything.
        self.call_after_refresh(self._mount_popup)

    @property
    def _list_open(self) -> bool:
        # Before it is mounted the list has no styles yet, so `display` would read as shown.
        return self._popup.is_attached and bool(self._popup.display)

    def _mount_popup(self) -> None:
        if not self._popup.is_attached:
            self.screen.mount(self._popup)

    def on_unmount(self) -> None:
        if self._popup.is_attached:
            self._popup.remove()

    def on_blur(self) -> None:
        self.action_close_completion()

    def on_resize(self) -> None:
        if self._list_open:
            self._place_popup()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self:
            return
        if self.text == self._set_text:
            self.action_close_completion()
            return
        self._set_text = None
        self._history_index = None
        self._refresh_completion()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        # Moving the cursor never opens the list, but it closes or narrows an open one.
        if event.text_area is self and self._completing is not None:
            self._refresh_completion()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self._LIST_ACTIONS:
            return self._list_open
        return super().check_action(action, parameters)

    async def _on_key(self, event: events.Key) -> None:
        # TextArea's key handler would insert a newline for Enter; keys bound to submit (by the
        # keymap, too) send instead.
        mine = next((b for node, b in self.screen._binding_chain if node is self), self._bindings)  # keymap applied
        if any(b.action == "submit" for b in mine.key_to_bindings.get(event.key, ())):
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        await super()._on_key(event)

    # Actions

    def _catch_up(self) -> None:
        """The list follows the text before Enter or Tab acts on it: keys typed in one burst are
        all inserted before the list hears of them (TextArea.Changed comes later), and a list
        still open for `/mode` replaced `/mode allow` with `/mode ` (issue 26 item 10)."""
        if self._list_open and self._completion_context() != self._completing:
            self._refresh_completion()

    async def action_delete_right_or_diff(self) -> None:
        if self.text:
            self.action_delete_right()
        else:
            await self.app.run_action("toggle_diff")

    def action_submit(self) -> None:
        self._catch_up()
        if self._list_open and not self._typed_in_full():
            self.action_complete()
            return
        text = self.text.strip()
        if not text:
            return
        self.post_message(self.Submitted(text, self._mentions(text), self))
        self._history.add(text)
        self._history_index, self._draft = None, ""
        self.action_close_completion()
        self.clear()

    def action_newline(self) -> None:
        if not self.read_only:
            self.replace("\n", *self.selection, maintain_selection_offset=False)

    def action_complete(self) -> None:
        self._catch_up()
        index, context = self._popup.highlighted, self._completing
        if index is None or context is None:
            return
        row, column = self.cursor_location
        token_end = column + len(re.match(r"\S*", self.document[row][column:])[0])
        insert = self._inserts[index]
        self.action_close_completion()
        self.replace(insert, (context.row, context.column), (row, token_end), maintain_selection_offset=False)

    def action_stay(self) -> None:
        """Tab with nothing to complete: the focus stays in the prompt."""

    def action_close_completion(self) -> None:
        self._completing = None
        self._files_asked = False
        self.workers.cancel_group(self, "prompt-files")
        if self._list_open:
            self._popup.display = False
            self.refresh_bindings()

    def action_completion_previous(self) -> None:
        self._popup.action_cursor_up()

    def action_completion_next(self) -> None:
        self._popup.action_cursor_down()

    def action_history_previous(self) -> None:
        entries = self._history.entries
        at_top = self.navigator.is_first_wrapped_line(self.cursor_location)
        if not at_top or not entries or self._history_index == 0:
            self.action_cursor_up()
            return
        if self._history_index is None:
            self._draft, self._history_index = self.text, len(entries)
        self._history_index -= 1
        self._show_text(entries[self._history_index], cursor_at_end=False)

    def action_history_next(self) -> None:
        at_bottom = self.navigator.is_last_wrapped_line(self.cursor_location)
        if self._history_index is None or not at_bottom:
            self.action_cursor_down()
            return
        self._history_index += 1
        if self._history_index == len(self._history.entries):
            self._history_index, text = None, self._draft
        else:
            text = self._history.entries[self._history_index]
        self._show_text(text, cursor_at_end=True)

    # Helpers

    def _show_text(self, text: str, *, cursor_at_end: bool) -> None:
        """Show `text` as if recalled: the cursor lands where the next Up/Down keeps walking."""
        self._set_text = text
        self.action_close_completion()
        self.text = text
        self.move_cursor(self.document.end)
        if not cursor_at_end and not self.navigator.is_first_wrapped_line(self.cursor_location):
            self.move_cursor((0, 0))

    def _typed_in_full(self) -> bool:
        """Whether the token being completed already is a whole command or known file: Enter sends it."""
        context = self._completing
        if context is None:
            return False
        if context.kind == "/":
            return any(name == context.query for name, _ in self._commands)
        return context.query in self._files.known

    def _mentions(self, text: str) -> list[str]:
        """The known files named as `@path` in `text`, each once, in order."""
        found: dict[str, None] = {}
        for match in _MENTION.finditer(text):
            path = match[1]
            if path not in self._files.known:
                path = path.rstrip(_TRAILING_PUNCTUATION)  # "see @a.py." names a.py
            if path in self._files.known:
                found[path] = None
        return list(found)

    def _completion_context(self) -> _Context | None:
        """The `/command` or `@path` token the cursor ends, if any."""
        if self.selection.start != self.selection.end:
            return None
        row, column = self.cursor_location
        before = self.document[row][:column]
        if row == 0 and self._commands and (match := re.fullmatch(r"/([\w:.-]*)", before)):
            return _Context("/", 0, 0, match[1])
        if match := re.search(r"(?<!\S)@(\S*)$", before):
            return _Context("@", row, match.start(), match[1])
        return None

    def _refresh_completion(self) -> None:
        context = self._completion_context()
        if context is None:
            self.action_close_completion()
        elif not self._popup.is_attached:  # typed in the first moments: mount it, then complete
            self._mount_popup()
            self.call_after_refresh(self._refresh_completion)
        elif context != self._completing:
            self._completing = context
            if context.kind == "/":
                self._fill_list(self._command_completions(context.query))
            else:
                if not self._files_asked:
                    self._files_asked = True
                    self.post_message(self.FilesWanted())
                self.run_worker(later(self._show_files, context), group="prompt-files", exclusive=True)

    def _fill_list(self, completions: list[tuple[str, Content]]) -> None:
        """Fill the list with (inserted text, row) pairs; an empty list hides it but keeps completing."""
        self._inserts = [insert for insert, _ in completions]
        self._popup.set_options(row for _, row in completions)
        self._popup.highlighted = 0 if completions else None
        if bool(completions) != self._list_open:
            self._popup.display = bool(completions)
            self.refresh_bindings()
        if completions:
            self._place_popup()

    def _place_popup(self) -> None:
        popup, region = self._popup, self.region
        height = min(popup.option_count, VISIBLE_ROWS) + popup.styles.gutter.height
        popup.styles.height = height
        popup.styles.width = region.width
        popup.absolute_offset = Offset(region.x, max(0, region.y - height))
        popup.refresh(layout=True)

    def _command_completions(self, query: str) -> list[tuple[str, Content]]:
        """Commands whose name matches `query`: prefix matches first, then by score, then as given."""
        ranked = []
        for order, (name, description) in enumerate(self._commands):
            match = fuzzy_match(query, name)
            if match is not None:
                ranked.append((not name.lower().startswith(query.lower()), -match[0], order, match[1]))
        ranked.sort(key=lambda item: item[:3])
        width = max(len(name) for name, _ in self._commands) + 3
        mark, muted = self._popup.style_of("match"), self._popup.style_of("detail")
        completions = []
        for _, _, order, positions in ranked:
            name, description = self._commands[order]
            label = _highlight(f"/{name}", [p + 1 for p in positions], mark).pad_right(width - len(name))
            completions.append((f"/{name} ", label + Content.styled(description, muted)))
        return completions

    async def _show_files(self, context: _Context) -> None:
        ranked = await self._files.rank(context.query)
        if context == self._completing:
            mark = self._popup.style_of("match")
            self._fill_list([(f"@{path} ", _highlight(path, positions, mark)) for path, positions in ranked])
