"""The app's sessions as files: launching, /clear and Ctrl+N record nothing until a prompt
(issue 26 item 3); `/resume` of a session another process has open is refused, naming it (issue 19)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakellm import Reply
from tests.tui.conftest import APP_SIZE, ready, type_text, wait_for
from tests.tui.test_app_sessions import idle, notices, submit


def _files(home: Path) -> list[Path]:
    folder = home / "data" / "coder-tui" / "sessions"
    return sorted(folder.glob("*.jsonl")) if folder.exists() else []


async def test_launch_clear_and_ctrl_n_leave_no_empty_sessions(make_app: Any, fake_llm: Any,
                                                               isolated_home: Path) -> None:
    fake_llm.script(Reply(text="The answer."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "real question")
        await idle(pilot)
        asked = app.bridge.session.session_id
        await submit(pilot, "/clear")
        await wait_for(pilot, lambda: app.bridge.session is not None and app.bridge.session.session_id != asked,
                       what="the new conversation")
        cleared = app.bridge.session.session_id
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.bridge.session is not None and app.bridge.session.session_id != cleared,
                       what="the next conversation")
        await ready(pilot)
        await app.bridge.shutdown()
    assert [p.stem for p in _files(isolated_home)] == [asked]
    app = make_app("--resume", "last")  # the last session with a conversation, not the empty ones
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        assert app.bridge.session.session_id == asked
        await app.bridge.shutdown()


async def test_resume_of_a_session_in_use_elsewhere_is_refused(make_app: Any, fake_llm: Any, workspace: Path,
                                                               isolated_home: Path) -> None:
    from agent.session.record import SessionStore

    store = SessionStore()
    other = store.create({"workspace": str(workspace), "root": str(workspace)})
    other.message({"role": "user", "content": "held elsewhere"})  # recorded and locked, as by another process
    app = make_app()
    try:
        async with app.run_test(size=APP_SIZE) as pilot:
            await ready(pilot)
            mine = app.bridge.session.session_id
            await type_text(pilot, f"/resume {other.session_id}")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any("is in use by pid" in n for n in notices(app)), what="the refusal")
            message = next(n for n in notices(app) if "is in use by pid" in n)
            assert f"session {other.session_id} is in use by pid " in message and "since" in message
            assert app.bridge.session is not None and app.bridge.session.session_id == mine  # kept
            await app.bridge.shutdown()
    finally:
        other.close()
    assert "held elsewhere" in other.path.read_text()


async def test_undo_names_the_files_the_agent_never_touched_and_keeps_them(make_app: Any, fake_llm: Any,
                                                                           workspace: Path) -> None:
    from tests.tui.test_app_sessions import change_with_checkpoint, patch
    from tui.screens.confirm import ConfirmScreen

    before = (workspace / "app.py").read_text()
    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('changed')")]), Reply(text="done"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await change_with_checkpoint(pilot)
        (workspace / "newfile.txt").write_text("made by hand\n")
        await submit(pilot, "/undo")
        screen = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen,
                                what="the question about the user's files")
        assert "newfile.txt" in screen.question and "not by the agent" in screen.question
        await pilot.press("enter")  # the default keeps them
        await wait_for(pilot, lambda: (workspace / "app.py").read_text() == before, what="the restore")
        await wait_for(pilot, lambda: any(n.startswith("Restored checkpoint") for n in notices(app)),
                       what="the notice")
        assert (workspace / "newfile.txt").read_text() == "made by hand\n"
        await app.bridge.shutdown()
