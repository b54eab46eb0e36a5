"""`coder-tui --github`: the app on a repository without a clone, against the fake GitHub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakellm import Reply, call
from tests.github.conftest import TOKEN
from tests.tui.conftest import APP_SIZE, app_options, ready, rendered_text, type_text, wait_for

FILES = {"README.md": "# Hello\n", "src/greet.py": "def greet(name):\n    return 'Hello ' + name\n"}


@pytest.fixture
def repo(gh_server: Any) -> Any:
    return gh_server.create_repo("octo/hello", FILES)


async def test_the_app_edits_a_repository_and_opens_a_pull_request(fake_llm: Any, gh_server: Any, repo: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.app import CoderApp
    from tui.widgets.approvalpanel import ApprovalPanel
    from tui.widgets.transcript import Notice

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    fake_llm.script(Reply(tool_calls=[call("patch_file", file_path="src/greet.py",
                                           patches=[{"old_text": "'Hello '", "new_text": "'Hi '"}])]),
                    Reply(text="Done."))
    app = CoderApp(app_options(Path("."), fake_llm, "--github", "octo/hello"), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        pane = app.query_one("#pane")
        await wait_for(pilot, lambda: "octo/hello" in rendered_text(pane), what="the repository pane")
        await type_text(pilot, "be friendlier")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(ApprovalPanel) and app.focused is not app.query_one("#prompt"),
                       what="the approval")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.query_one("#prompt").has_focus, what="the prompt back")
        await wait_for(pilot, lambda: not app.bridge.running and "1 file" in rendered_text(pane), what="staged")
        assert "src/greet.py" in rendered_text(pane)
        await type_text(pilot, "/pr")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Pull request #1" in str(n.render()) for n in app.query(Notice)),
                       timeout=60, what="the pull request")
        pull = gh_server.repo("octo/hello").pulls[1]
        assert pull["head"].startswith("coder-tui/") and pull["base"] == "main"
        assert repo.store.repo.git.show(f"{pull['head']}:src/greet.py").count("'Hi '") == 1
        text = "\n".join(str(w.render()) for w in app.query(Notice))
        assert TOKEN not in text


async def test_clone_in_the_app_shows_progress_and_offers_shell_tools(fake_llm: Any, gh_server: Any, repo: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.app import CoderApp

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    shown: list[tuple[str, bool]] = []

    class Watched(CoderApp):
        def github_progress(self, stage: str, done: int, total: int) -> None:
            super().github_progress(stage, done, total)
            self.call_later(lambda: shown.append((stage, self.query_one("#livediff").has_class("-open"))))

    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="ls src")]), Reply(text="It has greet.py."))
    app = Watched(app_options(Path("."), fake_llm, "--github", "octo/hello", "--clone", "--mode", "allow"),
                  animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        assert ("receiving objects", True) in shown  # the strip showed the clone's progress
        assert not app.query_one("#livediff").has_class("-open")  # and folded away afterwards
        pane = app.query_one("#pane")
        await wait_for(pilot, lambda: "GitHub (clone)" == pane.border_title, what="the clone pane")
        await type_text(pilot, "what is in src")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(fake_llm.requests) == 2 and not app.bridge.running, what="the run")
        told = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"][-1]
        assert "greet.py" in told


async def test_a_new_conversation_on_a_repository_records_it_and_gets_its_rate_limit_waits(
        fake_llm: Any, gh_server: Any, repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """/clear: the new session is bound to the repository like the first (--resume needs its pointer)."""
    from agent.session.record import SessionStore, load
    from tui.app import CoderApp

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    app = CoderApp(app_options(Path("."), fake_llm, "--github", "octo/hello"), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        first = app.bridge.session
        await type_text(pilot, "/clear")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.bridge.session is not first and app.bridge.session is not None,
                       what="/clear")
        session = app.bridge.session
        assert app.bridge.target.github.client.notify == session.emit  # waits reach the current chat
        fake_llm.script(Reply(text="hello"))  # a conversation is recorded from its first prompt
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.writer.path.exists() and not session.running,
                       timeout=60, what="the first prompt recorded")
    state = load(SessionStore().resolve(session.session_id, workspace=session.workspace.label)).state
    assert state["github"]["repository"] == "octo/hello"
