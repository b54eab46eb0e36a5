"""The transcript's streaming: coalesced appends, long answers continued in new widgets."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from tui.theme_vars import derive_app_variables
from tui.widgets.answer import SEAL_AFTER, AssistantMessage
from tui.widgets.transcript import Transcript


class Host(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return derive_app_variables(self.current_theme)

    def compose(self) -> ComposeResult:
        yield Transcript()


def paragraphs(count: int, fence_at: int | None = None) -> str:
    parts = []
    for i in range(count):
        if i == fence_at:
            parts.append("```python\n" + "x = 1\n\n" * 300 + "```")
        parts.append(f"Paragraph {i}: " + "words " * 60)
    return "\n\n".join(parts)


def test_a_short_answer_stays_in_one_widget() -> None:
    message = AssistantMessage()
    assert message.feed("Hello\n\nworld") is None
    assert message.written == "Hello\n\nworld" and "".join(message.pending) == "Hello\n\nworld"


def test_a_long_answer_is_continued_at_a_paragraph_break() -> None:
    text, message = paragraphs(20), AssistantMessage()
    rest = None
    for start in range(0, len(text), 7):
        rest = message.feed(text[start : start + 7])
        if rest is not None:
            break
    assert rest is not None
    assert len(message.written) > SEAL_AFTER and message.written.endswith("\n\n")
    assert "".join(message.pending) == message.written  # nothing lost, nothing doubled


def test_no_continuation_inside_a_code_block() -> None:
    text = paragraphs(1) + "\n\n" + paragraphs(0, fence_at=0) + "```python\n" + "y = 2\n\n" * 800 + "```\n\nafter"
    message = AssistantMessage()
    rest = message.feed(text)
    assert rest is not None and rest == "after"
    assert message.written.count("```") % 2 == 0


async def test_streamed_long_answer_arrives_whole_across_widgets() -> None:
    text = paragraphs(40, fence_at=5)
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        for start in range(0, len(text), 11):
            transcript.text(text[start : start + 11])
        transcript.end_answer()
        await pilot.pause(0.5)
        messages: list[Any] = list(app.query(AssistantMessage))
        assert len(messages) > 3
        assert "".join(m.written for m in messages) == text
        assert "".join(m.source for m in messages) == text  # every widget got all of its text
        assert all(m.written.count("```") % 2 == 0 for m in messages)
