"""Custom commands in the app: offered after `/`, listed by /help and the palette, and run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent import paths
from tests.conftest import write_files
from tests.custom.test_commands import REVIEW
from tests.fakellm import Reply
from tests.tui.conftest import APP_SIZE, make_app, ready, screen_shown, type_text, wait_for, workspace  # noqa: F401
from tests.tui.test_app_sessions import answers, idle, submit


async def test_custom_commands_in_completion_help_palette_and_run(make_app: Any, fake_llm: Any) -> None:
    from textual.widgets import DataTable

    from tui.commands import palette_commands
    from tui.screens.keys import KeysScreen
    from tui.widgets.prompt import CompletionPopup

    paths.config_dir().mkdir(parents=True, exist_ok=True)
    write_files(paths.config_dir() / "commands", {"review-pr.md": REVIEW, "git/summary.md": "Summarise $1."})
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        prompt = app.query_one("#prompt")
        await type_text(pilot, "/rev")
        popup = app.screen.query_one(CompletionPopup)
        await wait_for(pilot, lambda: popup.display and popup.option_count
                       and "review-pr" in str(popup.get_option_at_index(0).prompt), what="the command offered")
        assert "Review pull request" in str(popup.get_option_at_index(0).prompt)
        await pilot.press("tab")
        assert prompt.value.startswith("/review-pr")
        prompt.value = ""
        await type_text(pilot, "/git:s")
        await wait_for(pilot, lambda: popup.display and popup.option_count
                       and "git:summary" in str(popup.get_option_at_index(0).prompt), what="folder:name offered")
        prompt.value = ""
        assert {"/review-pr", "/git:summary"} <= {c.title for c in palette_commands(app)}
        await submit(pilot, "/help")
        screen = await screen_shown(pilot, KeysScreen, "/help")
        table = screen.query_one("#commands", DataTable)
        listed = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "/review-pr" in listed and "/git:summary" in listed and "/mode" in listed
        await pilot.press("escape")
        fake_llm.script(Reply(text="Reviewed."))
        await submit(pilot, "/review-pr 12 high carol")
        await idle(pilot)
        assert answers(app) == ["Reviewed."]
        assert fake_llm.requests[0]["messages"][-1]["content"].startswith("Review PR #12 with priority high")
