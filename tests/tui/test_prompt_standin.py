"""The first frame's prompt is a stand-in without Textual's TextArea (issue 15 item 16); the real
prompt takes its place right after that frame. The screen must not change, and nothing typed
before or during the swap may be lost or reordered."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual import events

from tests.tui.conftest import app_options


def make_app(workspace: Path, *extra: str) -> Any:
    """The app with its after-the-first-frame work (prompt, side panel, boot) left to the test."""
    from tui.app import CoderApp

    class Held(CoderApp):
        async def _first_frame_shown(self) -> None:
            pass

    return Held(app_options(workspace, None, *extra), animate=False)


@pytest.mark.parametrize("size", [(120, 36), (60, 20)])
@pytest.mark.parametrize("theme", ["dark", "light", "high-contrast"])
async def test_the_swap_to_the_real_prompt_changes_nothing_on_screen(tmp_path: Path, theme: str,
                                                                    size: tuple[int, int]) -> None:
    from tui.startup import mount_prompt
    from tui.widgets.prompt import PromptInput
    from tui.widgets.prompt_standin import PromptStandIn

    app = make_app(tmp_path, "--theme", theme)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        stand_in = app.query_one(PromptStandIn)
        assert app.focused is stand_in
        first_frame = app.export_screenshot()
        await mount_prompt(app)
        await pilot.pause()
        prompt = app.query_one("#prompt", PromptInput)
        assert app.focused is prompt and not app.query(PromptStandIn)
        prompt.cursor_blink = False  # a blink between the two screenshots is not a difference
        await pilot.pause()
        assert app.export_screenshot() == first_frame


async def test_keys_and_pastes_typed_before_and_during_the_swap_reach_the_prompt_in_order(tmp_path: Path) -> None:
    from tui.startup import mount_prompt

    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        await pilot.press(*"hel")  # typed ahead, while the app started
        app.post_message(events.Paste("lo"))
        await pilot.pause()
        swap = asyncio.create_task(mount_prompt(app))
        await pilot.press(*" wor")
        await swap
        await pilot.press(*"ld")
        await pilot.pause()
        assert app.query_one("#prompt").text == "hello world"
