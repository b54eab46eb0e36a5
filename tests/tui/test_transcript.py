"""The transcript's streaming: coalesced appends, long answers continued in new widgets."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from textual.app import App, ComposeResult

from tests.tui.conftest import wait_for
from tui.theme_vars import derive_app_variables
from tui.widgets.answer import SEAL_AFTER, AssistantMessage
from tui.widgets.transcript import TYPING_FLUSH_INTERVAL, Transcript


class Host(App[None]):
    def __init__(self, last_input: Callable[[], float] | None = None) -> None:
        super().__init__()
        self.last_input = last_input

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return derive_app_variables(self.current_theme)

    def compose(self) -> ComposeResult:
        yield Transcript(last_input=self.last_input)


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
        settled = [b for b in transcript.history.blocks if b.kind == "answer"]
        assert len(settled) > 3 and len(messages) <= 2  # drawn parts moved into the history
        assert [b.continued for b in settled] == [False] + [True] * (len(settled) - 1), [(b.continued, b.text[:30]) for b in settled]
        assert "".join(b.text for b in settled) + "".join(m.written for m in messages) == text
        assert "".join(m.source for m in messages) == "".join(m.written for m in messages)
        assert all(b.text.count("```") % 2 == 0 for b in settled)


@pytest.mark.parametrize("typed_ago", [0.1, None], ids=["typing", "not-typing"])
async def test_streamed_text_waits_while_the_user_types(typed_ago: float | None) -> None:
    last_input = None if typed_ago is None else (lambda: time.monotonic() - typed_ago)
    app = Host(last_input=last_input)
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript._last_flush = time.monotonic()
        transcript.text("Hello")
        live = transcript.live
        assert live is not None
        await wait_for(pilot, lambda: live._mounted, what="the answer mounted")  # appends wait for it
        transcript._last_flush = time.monotonic()
        await transcript._flush()
        if typed_ago is None:
            assert live.pending == []  # nobody types: appended at once
            return
        assert live.pending == ["Hello"]  # held: the user's keys are drawn first
        transcript._last_flush -= TYPING_FLUSH_INTERVAL
        await transcript._flush()
        assert live.pending == [] and live.written == "Hello"  # but not for longer than the interval


async def test_a_new_prompt_during_a_long_answer_stays_on_screen() -> None:
    from tui.widgets.transcript import UserMessage

    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.text(paragraphs(20))  # sealed at once: its part settles once drawn
        transcript.user("next question")  # the answer's turn is archived before that
        await pilot.pause(0.5)
        on_screen = [w for w in transcript.children if isinstance(w, UserMessage)]
        assert [w.message for w in on_screen] == ["next question"]
        answers = [b for b in transcript.history.blocks if b.kind == "answer"]
        assert "".join(b.text for b in answers) == paragraphs(20)


async def test_an_answer_that_ends_while_its_first_chunk_is_drawn_is_shown() -> None:
    """Issue 26 item 0: the answer ends (and the flush timer stops) while the timer's append is
    rendering; on a busy machine this left a fast answer blank on screen, its text taken."""
    app = Host()
    async with app.run_test() as pilot:
        transcript = app.query_one(Transcript)
        transcript.text("The answer is forty-two.")
        answer = transcript.live
        assert answer is not None
        await wait_for(pilot, lambda: answer._mounted, what="the answer's mount")
        deadline = time.monotonic() + 30
        while not answer._appending:  # the flush timer's append has started: the answer ends now
            assert time.monotonic() < deadline, "the flush timer never appended"
            await asyncio.sleep(0)
        transcript.end_answer()
        await wait_for(pilot, lambda: answer.drawn, what="the answer drawn")
        await pilot.pause()
        assert [block.source for block in answer.query("MarkdownBlock")] == ["The answer is forty-two."]


async def test_a_level_one_heading_in_an_answer_starts_at_its_left_edge() -> None:
    # Textual centred "# Title" in the live answer; the history (and every other heading) is left-aligned.
    from textual.app import App, ComposeResult

    from tui.theme_vars import derive_app_variables
    from tui.widgets.answer import AssistantMessage

    class Host(App[None]):
        def get_theme_variable_defaults(self) -> dict[str, str]:
            return derive_app_variables(self.current_theme)

        def compose(self) -> ComposeResult:
            yield AssistantMessage("# Title\n\nSome text.")

    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        title = next(line for line in lines if "Title" in line)
        assert title.index("Title") <= 2, lines
