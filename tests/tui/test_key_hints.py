"""The key hints at the foot of the screen (tui/widgets/footer.py) are made again only when what
they show changed: Textual's Footer made all of them again on every focus change, some fourteen
times before the app's first answer (issue 22)."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from tui.widgets.footer import KeyHints


class TwoButtons(App[None]):
    BINDINGS = [Binding("ctrl+s", "save", "Save"), Binding("ctrl+d", "toggle", "Toggle")]

    def __init__(self) -> None:
        super().__init__()
        self.toggle_enabled = True

    def compose(self) -> ComposeResult:
        yield Button("a", id="a")
        yield Button("b", id="b")
        yield KeyHints()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action == "toggle" and not self.toggle_enabled else True  # None: shown, disabled


async def settled(app: App[Any], pilot: Any) -> list[FooterKey]:
    """The footer's keys once what a bindings change scheduled after the next refresh has run."""
    await pilot.pause()
    done = asyncio.Event()
    app.query_one(KeyHints).call_after_refresh(done.set)  # queued after the footer's own callback
    app.query_one(KeyHints).refresh()
    await asyncio.wait_for(done.wait(), 30)
    await pilot.pause()
    return list(app.query(FooterKey))


async def test_a_focus_change_keeps_the_keys_and_a_changed_binding_makes_them_again() -> None:
    app = TwoButtons()
    async with app.run_test() as pilot:
        app.query_one("#a").focus()
        first = await settled(app, pilot)
        assert [(key.key, key.description) for key in first][:2] == [("ctrl+s", "Save"), ("ctrl+d", "Toggle")]

        app.query_one("#b").focus()  # the screen says its bindings were updated: the same hints
        assert await settled(app, pilot) == first  # the very same widgets: nothing made again

        app.toggle_enabled = False
        app.refresh_bindings()
        again = await settled(app, pilot)
        assert again != first
        assert [key._disabled for key in again][:2] == [False, True]  # the toggle's hint is drawn disabled
