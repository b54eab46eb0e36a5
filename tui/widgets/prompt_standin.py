"""What the first frame shows in the prompt's place: PromptInput's empty box, without Textual's
TextArea. Importing TextArea (and tree-sitter with it) and parsing its stylesheet cost the first
frame about a twentieth of a bare Textual app's start, so the real prompt replaces this stand-in
right after that frame (tui/startup.py).

Keys and pastes the stand-in is sent before then (typed ahead while the app started) are held in
the order they came and handed to the real prompt, which also takes the focus: nothing typed is
lost or reordered. They are caught in `post_message`, where the app delivers them, so that none is
ever left in the stand-in's own queue when it goes.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.await_remove import AwaitRemove
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget

PLACEHOLDER = "Ask the agent…  / for commands, @ to mention a file"
# PromptInput's keys; here too, so that the footer shows the same keys from the first frame on.
PROMPT_BINDINGS: list[BindingType] = [
    # Handled in `_on_key`, in order with the typing: as an app-level priority binding, an
    # Enter that arrives in the same burst as the text ran before the text was inserted.
    Binding("enter", "submit", "Send", id="prompt.submit"),
    # ctrl+j is the newline key every terminal sends; shift+enter needs the kitty protocol.
    Binding("ctrl+j,shift+enter", "newline", "Newline", id="prompt.newline"),
    Binding("tab", "complete", "Complete", id="prompt.complete"),
    # With nothing to complete, Tab stays in the prompt (as TextArea's "focus" tab it moved the
    # focus out, and what the user typed next went nowhere).
    Binding("tab", "stay", "Stay in the prompt", show=False, id="prompt.stay"),
    Binding("escape", "close_completion", "Close list", id="prompt.close_completion"),
    # While the list is open the first binding of a key wins; otherwise the next one runs.
    Binding("up", "completion_previous", "Previous completion", show=False, id="prompt.completion_previous"),
    Binding("down", "completion_next", "Next completion", show=False, id="prompt.completion_next"),
    Binding("up", "history_previous", "Previous prompt", show=False, id="prompt.history_previous"),
    Binding("down", "history_next", "Next prompt", show=False, id="prompt.history_next"),
]
LIST_ACTIONS = frozenset({"complete", "close_completion", "completion_previous", "completion_next"})


class PromptStandIn(Widget, can_focus=True):
    """Draws the placeholder (and the cursor on it when focused) as TextArea draws it."""

    DEFAULT_CSS = Path(__file__).with_name("prompt_standin.tcss").read_text(encoding="utf-8")
    COMPONENT_CLASSES = {"prompt-stand-in--placeholder", "prompt-stand-in--cursor"}
    BINDINGS = PROMPT_BINDINGS  # shown in the footer; the keys themselves go to the real prompt

    def __init__(self, placeholder: str = PLACEHOLDER) -> None:
        super().__init__()
        self.placeholder = placeholder
        self._held: list[Message] = []
        self._successor: Widget | None = None

    @property
    def holds_keys(self) -> bool:
        """Whether keys typed ahead wait here for the real prompt."""
        return bool(self._held)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action not in LIST_ACTIONS  # as PromptInput's with its list closed

    def action_stay(self) -> None:
        """Tab with nothing to complete: the focus stays here."""

    def post_message(self, message: Message) -> bool:
        if not isinstance(message, (events.Key, events.Paste)):
            return super().post_message(message)
        if self._successor is not None:
            return self._successor.post_message(message)
        self._held.append(message)
        return True

    def hand_over(self, prompt: Widget) -> AwaitRemove:
        """Give `prompt` the keys held so far, any still to come, and the focus; then go (await
        the result for the removal to end)."""
        self._successor = prompt
        for message in self._held:
            prompt.post_message(message)
        self._held.clear()
        if self.screen.focused is self:
            self.screen.set_focus(prompt)
        self.display = False  # out of the layout now: no frame shows both while the removal runs
        return self.remove()

    def render_line(self, y: int) -> Strip:
        # As TextArea.render_line draws an empty document's placeholder.
        lines = Content.from_text(self.placeholder).wrap(self.content_size.width)
        if y >= len(lines):
            return Strip.blank(self.content_size.width)
        content = lines[y].stylize(self.get_visual_style("prompt-stand-in--placeholder"))
        if self.has_focus and y == 0:
            cursor = self.get_component_rich_style("prompt-stand-in--cursor")
            content = content.stylize(Style.from_rich_style(cursor), 0, 1)
        return Strip(content.render_segments(self.visual_style), content.cell_length)
