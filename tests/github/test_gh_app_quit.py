"""The app on a GitHub repository: quitting with unpublished edits asks first; rate-limit waits
show in the status bar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakellm import Reply, call
from tests.github.conftest import TOKEN
from tests.tui.conftest import APP_SIZE, app_options, ready, type_text, wait_for

FILES = {"README.md": "# Hello\n", "src/greet.py": "def greet(name):\n    return 'Hello ' + name\n"}
EDIT = Reply(tool_calls=[call("patch_file", file_path="src/greet.py",
                              patches=[{"old_text": "'Hello '", "new_text": "'Hi '"}])])


@pytest.fixture
def repo(gh_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    return gh_server.create_repo("octo/hello", FILES)


async def _edit_then_quit(pilot: Any, fake_llm: Any) -> Any:
    from tui.screens.unpublished import UnpublishedScreen

    app = await ready(pilot)
    await type_text(pilot, "be friendlier")
    await pilot.press("enter")
    await wait_for(pilot, lambda: len(fake_llm.requests) == 2 and not app.bridge.running, timeout=30, what="the run")
    await pilot.press("ctrl+q")
    return await wait_for(pilot, lambda: isinstance(app.screen, UnpublishedScreen) and app.screen, what="the prompt")


async def test_quitting_with_unpublished_edits_asks_and_publishes(fake_llm: Any, gh_server: Any, repo: Any,
                                                                  isolated_home: Path) -> None:
    from tui.app import CoderApp

    fake_llm.script(EDIT, Reply(text="Done."))
    app = CoderApp(app_options(Path("."), fake_llm, "--github", "octo/hello", "--mode", "allow"), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await _edit_then_quit(pilot, fake_llm)
        text = " ".join(str(w.render()) for w in screen.query("Static"))
        assert "1 file changed in octo/hello, not published" in text and "src/greet.py" in text
        await pilot.press("escape")  # cancel: still here, nothing published
        await wait_for(pilot, lambda: app.screen is not screen, what="the prompt to close")
        assert app.is_running and set(repo.store.refs("refs/heads/")) == {"refs/heads/main"}
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "UnpublishedScreen", what="the prompt again")
        await pilot.press("p")
        await wait_for(pilot, lambda: not app.is_running, timeout=30, what="the app to quit")
    branches = [r for r in repo.store.refs("refs/heads/") if r != "refs/heads/main"]
    assert len(branches) == 1
    branch = branches[0].removeprefix("refs/heads/")
    assert "'Hi '" in repo.store.file_at(branch, "src/greet.py").decode()
    assert not gh_server.repo("octo/hello").pulls
    recorded = "".join(p.read_text() for p in (isolated_home / "data" / "coder-tui" / "sessions").glob("*.jsonl"))
    records = [json.loads(line) for line in recorded.splitlines()]
    published = [r["data"] for r in records if r["kind"] == "event" and r["data"]["type"] == "published"]
    assert published and published[0]["branch"] == branch


async def test_quitting_without_publishing_keeps_the_branch_untouched(fake_llm: Any, gh_server: Any, repo: Any,
                                                                       isolated_home: Path) -> None:
    from tui.app import CoderApp

    fake_llm.script(EDIT, Reply(text="Done."))
    app = CoderApp(app_options(Path("."), fake_llm, "--github", "octo/hello", "--mode", "allow"), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await _edit_then_quit(pilot, fake_llm)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, timeout=30, what="the app to quit")
    assert set(repo.store.refs("refs/heads/")) == {"refs/heads/main"}


async def test_nothing_changed_quits_without_asking(fake_llm: Any, gh_server: Any, repo: Any,
                                                    isolated_home: Path) -> None:
    from tui.app import CoderApp

    app = CoderApp(app_options(Path("."), fake_llm, "--github", "octo/hello"), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=30, what="the app to quit")


async def test_a_rate_limit_while_opening_shows_in_the_status_bar(fake_llm: Any, gh_server: Any, repo: Any,
                                                                  isolated_home: Path) -> None:
    from tui.app import CoderApp

    gh_server.exhaust_rate_limit(reset_in=3.0)
    app = CoderApp(app_options(Path("."), fake_llm, "--github", "octo/hello"), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        status = app.query_one("#status")
        await wait_for(pilot, lambda: status.state == "waiting", timeout=30, what="the wait in the status bar")
        assert status.detail.startswith("rate limit until ")
        await ready(pilot)  # and it opens once the limit resets
