"""Desktop notifications: the escape sequence the app writes to the terminal when a run ends or an
approval waits while the terminal is not focused, and nothing while it is (or when turned off)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual import events

from tests.fakellm import Reply, call
from tests.tui.conftest import APP_SIZE, ready, type_text, wait_for
from tests.tui.test_app_sessions import approval, idle
from tui.notify import channel, sequence


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TMUX", "KITTY_WINDOW_ID", "VTE_VERSION", "WT_SESSION", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")


def _written(app: Any) -> list[str]:
    """What the app's driver writes to the terminal from now on (still written: a spy, not a stand-in)."""
    seen: list[str] = []
    original = app._driver.write

    def write(data: str) -> None:
        seen.append(data)
        original(data)

    app._driver.write = write
    return seen


def _notices(seen: list[str]) -> list[str]:
    return [s for s in seen if s.startswith(("\x1b]9;", "\x1b]99;", "\x1b]777;"))]


async def _ask(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_a_run_that_ends_unfocused_notifies_and_focused_does_not(make_app: Any, fake_llm: Any,
                                                                       terminal: None) -> None:
    fake_llm.script(Reply(text="All done here."), Reply(text="Second."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        seen = _written(app)
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.notifier.focused, what="the blur")
        await _ask(pilot, "do it")
        await idle(pilot)
        assert _notices(seen) == ["\x1b]9;coder-tui: Finished: All done here.\x07"]
        app.post_message(events.AppFocus())
        await wait_for(pilot, lambda: app.notifier.focused, what="the focus")
        await _ask(pilot, "again")
        await idle(pilot)
        assert len(_notices(seen)) == 1  # nothing while focused


async def test_an_approval_waiting_unfocused_notifies(make_app: Any, fake_llm: Any, workspace: Path,
                                                      terminal: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-kitty")
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="rm -rf build")]), Reply(text="ok"))
    app = make_app("--mode", "ask")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        seen = _written(app)
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.notifier.focused, what="the blur")
        await _ask(pilot, "clean")
        await approval(pilot)
        await wait_for(pilot, lambda: _notices(seen), what="the notification")
        assert _notices(seen)[0] == ("\x1b]99;i=coder-tui:d=0;coder-tui: Approval needed\x1b\\"
                                     "\x1b]99;i=coder-tui:p=body;bash_exec: rm -rf build\x1b\\")
        await pilot.press("n")
        await pilot.press("enter")
        await idle(pilot)


async def test_notifications_off_sends_nothing(make_app: Any, fake_llm: Any, terminal: None) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "coder-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('notifications = "off"\n')
    fake_llm.script(Reply(text="done"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        seen = _written(app)
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.notifier.focused, what="the blur")
        await _ask(pilot, "do it")
        await idle(pilot)
        assert _notices(seen) == [] and app.notifier.sent == []


def test_each_terminal_gets_its_sequence() -> None:
    assert sequence("t", "b", {"TERM": "foot"}) == "\x1b]777;notify;t;b\x1b\\"
    assert sequence("t", "b", {"TERM_PROGRAM": "WezTerm"}) == "\x1b]9;t: b\x07"
    assert sequence("t", "b", {"TERM": "xterm-kitty"}).startswith("\x1b]99;i=coder-tui:d=0;t\x1b\\")
    assert sequence("t", "b", {"TERM": "foot", "TMUX": "/tmp/x"}) == "\x1bPtmux;\x1b\x1b]777;notify;t;b\x1b\x1b\\\x1b\\"
    # text from outside (a command, an answer) cannot end the sequence early or smuggle another one
    assert sequence("t", "a\x1b]52;c;evil\x07b\nc", {}) == "\x1b]9;t: a ]52;c;evil b c\x07"
    assert channel("auto", {"TERM": "foot"}) == "terminal" and channel("off", {"TERM": "foot"}) == "off"
    assert channel("desktop", {}) == "terminal"  # no desktop session: the terminal's sequence
