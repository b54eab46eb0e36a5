"""Screens that must never get stuck: after a restore, after a stop, after a resize, after a failure."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, cli, cli_env
from tests.fakellm import Reply
from tests.tui.conftest import APP_SIZE, app_options, ready, rendered_text, type_text, wait_for
from tests.tui.test_app_sessions import answers, change_with_checkpoint, idle, notices, patch, submit


# -- a restore from the timeline ----------------------------------------------------------------

async def test_after_a_restore_focus_is_back_in_the_prompt_and_enter_never_restores(
        make_app: Any, workspace: Path, fake_llm: Any) -> None:
    from tui.screens.confirm import ConfirmScreen
    from tui.widgets.prompt import PromptInput

    before = (workspace / "app.py").read_text()
    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('changed')")]), Reply(text="done"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        entry = await change_with_checkpoint(pilot)
        await pilot.press("ctrl+t")
        assert app.focused is entry
        await pilot.press("enter")  # Enter alone does not open the restore dialog
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: (workspace / "app.py").read_text() == before, what="the restore")
        await wait_for(pilot, lambda: any("Restored checkpoint" in n for n in notices(app)), what="the notice")
        prompt = app.query_one(PromptInput)
        assert app.focused is prompt
        await type_text(pilot, "y then more")  # typed into the prompt, not a second restore
        await pilot.pause()
        assert "y then more" in prompt.text
        assert not isinstance(app.screen, ConfirmScreen)
        assert sum("Restored checkpoint" in n for n in notices(app)) == 1


async def test_escape_in_the_timeline_goes_back_to_the_prompt(make_app: Any, fake_llm: Any) -> None:
    from tui.widgets.prompt import PromptInput
    from tui.widgets.timeline import CheckpointEntry

    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('changed')")]), Reply(text="done"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=(80, 30)) as pilot:  # narrow: the timeline takes the chat's place
        await change_with_checkpoint(pilot)
        await pilot.press("ctrl+t")
        assert isinstance(app.focused, CheckpointEntry) and app.query_one("#main").display is False
        await pilot.press("escape")
        assert app.focused is app.query_one(PromptInput)
        assert app.query_one("#main").display and not app.query_one("#side").display


# -- a stop while a long answer is drawn ---------------------------------------------------------

async def test_a_stop_drops_what_was_not_drawn_and_nothing_arrives_after_it(make_app: Any, fake_llm: Any) -> None:
    from tui.widgets.answer import AssistantMessage

    paragraph = "A long and fast answer, drawn in parts as it streams in. " * 8 + "\n\n"
    fake_llm.script(Reply(text=paragraph * 400, chunk_size=40, chunk_delay=0.002), Reply(text="Short answer."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "talk a lot")
        await wait_for(pilot, lambda: sum(map(len, answers(app))) > 2000, what="streaming to be under way")
        await pilot.press("x")  # while the user types, text waits longer before it is drawn
        await wait_for(pilot, lambda: any(m.pending for m in app.query(AssistantMessage)), what="undrawn text")
        app.action_stop()  # what Esc does
        undrawn = sum(len(chunk) for m in app.query(AssistantMessage) for chunk in m.pending)
        shown = sum(map(len, answers(app))) - undrawn
        # The app is busy for a moment (a slow terminal): the model's thread streams on meanwhile.
        time.sleep(0.3)
        await idle(pilot)
        stopped_at = time.monotonic()
        while time.monotonic() - stopped_at < 0.5:  # text that arrives late would show up here
            await pilot.pause(0.05)
            assert app.query_one("#status").state == "idle"
        assert sum(map(len, answers(app))) == shown  # nothing drawn after the stop, nothing added
        assert notices(app)[-1] == "Stopped."
        assert all(not m.pending for m in app.query(AssistantMessage))
        await submit(pilot, "and now briefly")
        await idle(pilot)
        assert answers(app)[-1] == "Short answer."
        assert sum(map(len, answers(app))) == shown + len("Short answer.")


def test_an_answer_drops_its_undrawn_text() -> None:
    from tui.widgets.answer import AssistantMessage

    answer = AssistantMessage()
    answer.pending, answer.written = [], "drawn. "  # as after a flush
    answer.feed("buffered, ")
    answer.feed("not drawn")
    answer.drop_pending()
    assert answer.written == "drawn. " and answer.pending == [] and answer.drawn and not answer.streaming


# -- a resize ------------------------------------------------------------------------------------

async def test_the_layout_follows_the_new_size_both_ways(make_app: Any) -> None:
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        side = app.query_one("#side")
        assert side.display and side.region.width > 0
        await pilot.resize_terminal(60, 30)
        await wait_for(pilot, lambda: app.screen.has_class("-narrow") and side.region.width == 0,
                       what="the side panel to fold")
        footer = app.screen.query_one("Footer")
        await wait_for(pilot, lambda: not footer.query(".-command-palette"), what="the palette's key to give way")
        await pilot.pause()
        keys = [key for key in footer.query("FooterKey") if key.display]
        assert keys and all(key.region.right <= 60 and key.region.width > 0 for key in keys)
        await pilot.resize_terminal(*APP_SIZE)
        await wait_for(pilot, lambda: not app.screen.has_class("-narrow") and side.region.width > 0,
                       what="the side panel to come back")


# -- states where the agent cannot start ---------------------------------------------------------

@pytest.mark.parametrize("how", ["click", "escape"])
async def test_quit_on_the_first_setup_screen_quits_the_app(make_app: Any, how: str) -> None:
    from tui.screens.setup import SetupScreen

    app = make_app(fake=None)
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query("#setup-quit")
                       and app.screen.query_one("#setup-quit").region.width > 0, what="setup")
        if how == "click":
            await pilot.click("#setup-quit")
        else:
            await pilot.press("escape")  # the footer's "esc Quit"
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app.return_code == 0


def test_a_bad_github_value_exits_2_at_once(isolated_home: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(cli("--github", "not a repo"), cwd=ROOT,
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "--github: 'not a repo' is not a repository; use OWNER/REPO" in done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 30


async def test_a_prompt_typed_after_a_failed_start_says_what_failed_and_what_to_do(make_app: Any) -> None:
    app = make_app("--resume", "no-such-session")
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: app.query_one("#status").state == "not ready", what="the failure")
        assert any("--resume" in n and "coder-tui sessions" in n for n in notices(app))
        await submit(pilot, "hello")
        said = await wait_for(pilot, lambda: next((n for n in notices(app) if n.startswith("Not sent")), None),
                              what="the answer to the prompt")
        assert "--resume" in said and "Ctrl+Q" in said and "Up recalls it" in said
        assert app.bridge.waiting == []  # nothing would ever send it
        assert not any("still loading" in n.message for n in app._notifications)


async def test_the_room_pane_says_why_the_join_failed(fake_llm: Any, isolated_home: Path) -> None:
    from tests.oct.server import OctTestServer
    from tui.app import CoderApp

    server = OctTestServer()
    await server.start()
    try:
        app = CoderApp(app_options(Path("."), fake_llm, "--room", "no-such-room", "--server", server.url),
                       animate=False)
        async with app.run_test(size=APP_SIZE) as pilot:
            await wait_for(pilot, lambda: app.query_one("#status").state == "not ready", timeout=60,
                           what="the failed join")
            pane = await wait_for(pilot, lambda: (text := rendered_text(app.query_one("#pane")))
                                  and "could not join" in text and text, what="the pane")
            assert "Room not found" in pane and "connecting" not in pane
    finally:
        await server.stop()


async def test_escape_stops_a_run_in_a_room_and_drops_only_the_prompts_typed_here(
        fake_llm: Any, isolated_home: Path) -> None:
    from tests.oct.nodeproc import NodeHost
    from tests.oct.server import OctTestServer
    from tui.app import CoderApp

    server, host = OctTestServer(), NodeHost()
    await server.start()
    await host.start()
    try:
        room = await host.create(server.url, files={"ws/main.py": "a = 1\n"})
        fake_llm.script(Reply(text="word " * 3000, chunk_size=5, chunk_delay=0.01))
        app = CoderApp(app_options(Path("."), fake_llm, "--room", room, "--server", server.url), animate=False)
        async with app.run_test(size=APP_SIZE) as pilot:
            await ready(pilot)
            await submit(pilot, "talk a lot")
            await wait_for(pilot, lambda: app.bridge.running and sum(map(len, answers(app))) > 100, timeout=60,
                           what="the run to stream")
            await submit(pilot, "and then this")  # queued behind the run
            await wait_for(pilot, lambda: len(app.bridge.room.status.queue) == 1, what="the queued prompt")
            await pilot.press("escape")
            await wait_for(pilot, lambda: "Stopped." in notices(app) and not app.bridge.running, what="the stop")
            assert app.bridge.room.status.queue == []
            asked = [m["content"] for r in fake_llm.requests for m in r["messages"] if m["role"] == "user"]
            assert not any("and then this" in a for a in asked), asked  # dropped with the stop
            await app.bridge.shutdown()
    finally:
        await host.stop()
        await server.stop()
