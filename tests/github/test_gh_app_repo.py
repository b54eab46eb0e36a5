"""`/repo` in the app: show the repository, switch it (the pane follows), refuse in a local folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.github.conftest import TOKEN
from tests.tui.conftest import APP_SIZE, app_options, ready, rendered_text, type_text, wait_for


def notices(app: Any) -> str:
    from tui.widgets.transcript import Notice

    return "\n".join(str(n.render()) for n in app.query(Notice))


async def command(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_repo_shows_and_switches_and_the_pane_follows(fake_llm: Any, gh_server: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.app import CoderApp

    gh_server.create_repo("octo/hello", {"README.md": "# Hello\n"})
    gh_server.create_repo("octo/docs", {"guide.md": "# Guide\n"}, default_branch="trunk")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    app = CoderApp(app_options(Path("."), fake_llm, "--github", "octo/hello"), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        pane = app.query_one("#pane")
        await wait_for(pilot, lambda: "octo/hello" in rendered_text(pane), what="the repository pane")
        await command(pilot, "/repo")
        await wait_for(pilot, lambda: "repository: octo/hello@main" in notices(app), what="the current one")
        await command(pilot, "/repo octo/docs")
        await wait_for(pilot, lambda: "Now working on octo/docs@trunk" in notices(app), timeout=30,
                       what="the switch")
        await wait_for(pilot, lambda: "octo/docs" in rendered_text(pane), what="the pane on the new repository")
        assert "trunk" in rendered_text(pane)
        assert app.query_one("#status").workspace == "github:octo/docs"
        assert app.bridge.session.workspace.label == "github:octo/docs"
        await command(pilot, "/repo octo/missing")
        await wait_for(pilot, lambda: "/repo: repository octo/missing not found" in notices(app), timeout=30,
                       what="the refusal")
        assert app.bridge.session.workspace.label == "github:octo/docs"


async def test_repo_in_a_local_folder_is_a_clear_error(fake_llm: Any, tmp_path: Path) -> None:
    from tui.app import CoderApp

    app = CoderApp(app_options(tmp_path, fake_llm), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await command(pilot, "/repo octo/docs")
        await wait_for(pilot, lambda: "/repo: the session is not on GitHub" in notices(app), what="the error")
        await command(pilot, "/repo")
        await wait_for(pilot, lambda: notices(app).count("/repo: the session is not on GitHub") == 2,
                       what="the error again")
