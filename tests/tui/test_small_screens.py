"""Small things of the app's screens and commands a new user hits (issue 26, item 20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import DataTable

from tests.fakellm import Reply, call
from tests.tui.conftest import APP_SIZE, ready, screen_shown, wait_for
from tests.tui.test_app_sessions import answers, idle, notices, submit
from tui.commands import SLASH_COMMANDS
from tui.screens.keys import KeysScreen


class Host(App[None]):
    def on_mount(self) -> None:
        self.push_screen(KeysScreen())


@pytest.mark.parametrize("size", [(120, 60), (80, 60)], ids=["120", "80"])
async def test_help_shows_every_command_description_whole_and_as_typed(size: tuple[int, int]) -> None:
    """`[revoke TOOL | revoke all]` is text, not Rich markup, and long descriptions wrap, not cut."""
    app = Host()
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, KeysScreen), what="the keys screen")
        table = app.screen.query_one("#commands", DataTable)
        table.focus()
        await pilot.pause()
        rows = []
        for row in range(table.row_count):  # what is drawn, row by row: no word of a description lost
            table.move_cursor(row=row)
            await pilot.pause()
            region = table._get_row_region(row)
            rows.append(" ".join(table.render_line(y - table.scroll_offset.y).text.strip()
                                 for y in range(region.y, region.bottom)))
        assert table.size.width <= size[0]
        assert "[revoke TOOL | revoke all]" in next(row for row in rows if "/allowances" in row)
        for (name, description), drawn in zip(SLASH_COMMANDS, rows, strict=True):
            words = " ".join(drawn.split())
            assert " ".join(description.split()) in words.replace(f"/{name}", "", 1).strip(), (name, drawn)


async def test_compact_says_once_what_it_did(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    replies = [Reply(text=f"answer {i}") for i in range(6)]
    fake_llm.script(*replies, Reply(text="The user asked six things; each was answered."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        for i in range(6):
            await submit(pilot, f"question {i}")
            await wait_for(pilot, lambda i=i: f"answer {i}" in answers(app), what=f"answer {i}")
            await idle(pilot)
        await submit(pilot, "/compact")
        await wait_for(pilot, lambda: any(n.startswith("Compacted") for n in notices(app)), what="/compact")
        await pilot.pause()
        assert [n for n in notices(app) if "Compacted" in n or "compacted" in n] == [
            n for n in notices(app) if n.startswith("Compacted") and "messages" in n]
        assert len([n for n in notices(app) if "ompacted" in n]) == 1


async def test_sessions_opens_on_the_current_session_or_the_newest(make_app: Any, workspace: Path,
                                                                   fake_llm: Any) -> None:
    from textual.widgets import OptionList

    from tui.screens.sessions import SessionsScreen

    fake_llm.script(Reply(text="first answer"), Reply(text="second answer"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)

        async def listed() -> tuple[list[str | None], int | None]:
            await submit(pilot, "/sessions")
            screen = await screen_shown(pilot, SessionsScreen, "list")
            options = await wait_for(pilot, lambda: screen.query_one(OptionList).option_count
                                     and screen.query_one(OptionList), what="the rows")
            return [options.get_option_at_index(i).id for i in range(options.option_count)], options.highlighted

        await submit(pilot, "first")
        await idle(pilot)
        first = app.bridge.session.session_id
        await submit(pilot, "/clear")
        await wait_for(pilot, lambda: app.bridge.session.session_id != first, what="/clear")
        await submit(pilot, "second")
        await idle(pilot)
        second = app.bridge.session.session_id
        await submit(pilot, "/clear")
        await wait_for(pilot, lambda: app.bridge.session.session_id != second, what="/clear")
        ids, highlighted = await listed()  # the new conversation is not recorded yet: the newest
        assert highlighted == 0 and ids[0] == second
        await pilot.press("down", "enter")  # Enter continues the highlighted one
        await wait_for(pilot, lambda: app.bridge.session.session_id == first, what="the first session back")
        ids, highlighted = await listed()
        assert highlighted is not None and ids[highlighted] == first
        await pilot.press("escape")


async def test_model_refuses_a_typod_provider_and_keeps_the_model(make_app: Any, workspace: Path,
                                                                  fake_llm: Any) -> None:
    from tui.screens.setup import SetupScreen

    fake_llm.script(Reply(text="still here"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        model = app.bridge.session.model
        await submit(pilot, "/model opnai/gpt-4o")
        await wait_for(pilot, lambda: any("opnai/gpt-4o" in n and "provider" in n for n in notices(app)),
                       what="the error")
        assert app.bridge.session.model == model
        await submit(pilot, "hi")
        await idle(pilot)
        assert "still here" in answers(app) and not isinstance(app.screen, SetupScreen)


async def test_a_session_killed_mid_run_resumes_with_no_spinner(make_app: Any, workspace: Path,
                                                                 fake_llm: Any) -> None:
    """The file of a session killed during a tool call ends at the call: the resumed timeline shows
    that run as interrupted, not as a trace still spinning."""
    import json

    from agent.session.record import SessionStore
    from tui.widgets.timeline import RunEnd, RunEntry, Timeline

    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="echo hi")]), Reply(text="done"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "say hi")
        await idle(pilot)
        path = SessionStore().resolve(app.bridge.session.session_id)
        await app.bridge.shutdown()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, text in enumerate(lines)
               if json.loads(text).get("kind") == "event" and json.loads(text)["data"].get("type") == "tool_call")
    path.write_text("".join(lines[:cut + 1]), encoding="utf-8")  # as a kill during the call leaves it

    app = make_app("--resume", "last")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        timeline = app.query_one(Timeline)
        assert timeline.run is None and not timeline.traces
        entry = timeline.query_one(RunEntry)
        assert entry.finished and all(trace.ok is not None for trace in entry.traces)
        assert any("interrupted" in end.outcome for end in timeline.query(RunEnd))
