"""The app shows a hostile model's control and bidi characters, never hands them to the terminal:
approval panel, diff view, transcript, timeline and a resumed session's history (issue 20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakellm import Reply, call
from tests.security.test_visible_text import ACTIVE, HIDDEN_COMMAND
from tests.tui.conftest import ready, wait_for
from tests.tui.test_app_sessions import patch, submit
from tests.tui.test_docked_approval import panel_text


async def docked(pilot: Any, tool: str) -> Any:
    """The approval panel, with the focus (a generous bound: the first request loads litellm)."""
    from tui.widgets.approvalpanel import ApprovalPanel

    def found() -> Any:
        panel = next(iter(pilot.app.query(ApprovalPanel)), None)
        return (panel is not None and panel.request.tool == tool
                and pilot.app.focused in (panel, *panel.query("DiffView")) and panel)

    return await wait_for(pilot, found, timeout=90, what="the docked approval")


def on_screen(app: Any) -> str:
    """Every cell the terminal is sent for the current screen (the compositor's output)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def widget_texts(app: Any) -> str:
    """What every Static in the app holds, on screen or not (the timeline may be folded away)."""
    from textual.widgets import Static

    return "\n".join(str(widget.render()) for widget in app.query(Static))


def assert_inert(text: str) -> None:
    found = sorted({m.group() for m in ACTIVE.finditer(text)})
    assert not found, found


async def test_hostile_command_diff_and_text_are_shown_not_acted_on(make_app: Any, workspace: Path,
                                                                    fake_llm: Any) -> None:
    fake_llm.script(
        Reply(text="Tidying \x1b[2J up\u202e", tool_calls=[call("bash_exec", command=HIDDEN_COMMAND)]),
        Reply(tool_calls=[patch("print('hello')", "print('\x1b[31mhi\u202e\x9b2J')")]),
        Reply(text="Done \x1b]0;owned\x07 \x9b2J\u2066x\u2069"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "tidy")
        panel = await docked(pilot, "bash_exec")
        await pilot.pause()
        assert "rm -rf src; : \\x1b[2K\\r$ ls -la" in panel_text(panel)  # the whole command, to be read
        assert_inert(on_screen(app) + panel_text(panel))
        await pilot.press("n")  # the user read the real command: denied, with no feedback
        await pilot.press("enter")
        panel = await docked(pilot, "patch_file")
        await pilot.pause()
        # The diff view shows C0 controls as their Unicode pictures, the rest as the core does.
        await wait_for(pilot, lambda: "print('␛[31mhi⟨U+202E⟩\\x9b2J')" in on_screen(app), timeout=30,
                       what=on_screen(app))
        assert_inert(on_screen(app) + panel_text(panel))
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.bridge.running and app.query_one("#status").state == "idle",
                       timeout=60, what="the run to end")
        await pilot.pause()
        assert_inert(on_screen(app) + widget_texts(app))
        assert "Done \\x1b]0;owned\\x07 \\x9b2J⟨U+2066⟩x⟨U+2069⟩" in on_screen(app) + widget_texts(app)
        assert "\x1b[31m" in (workspace / "app.py").read_text()  # the file holds what the user approved


def test_a_resumed_sessions_history_shows_the_characters() -> None:
    from rich.console import Console
    from rich.style import Style

    from tui.widgets.history import Block
    from tui.widgets.historyrender import render_block

    blocks = [Block("user", text="do \x1b[2Jit\u202e", who="peer\x1b]0;x\x07"),
              Block("answer", text="# Done \x9b2J\n\nall \x1b[8mhidden\u2066"),
              Block("tool", text="out\x1b[2J\r\n", who="bash_exec", key=HIDDEN_COMMAND, ok=True, expanded=True),
              Block("diff", text="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\x1b[31m\u202e\n", who="x\x1b.py"),
              Block("notice", text="warn \x1b[2J", who="warning")]
    console = Console(width=100, color_system=None, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for block in blocks:
        console.print(render_block(block, lambda name: Style(), dark=True))
    shown = console.export_text()
    console.file.close()
    assert_inert(shown)
    assert "rm -rf src; : \\x1b[2K\\r$ ls -la" in shown and "peer\\x1b]0;x\\x07" in shown


async def test_a_resumed_sessions_timeline_shows_the_characters(make_app: Any, workspace: Path) -> None:
    from agent.events import RunStarted
    from agent.session.record import SessionStore
    from agent.workspaces.local import LocalWorkspace

    label = LocalWorkspace(str(workspace)).label
    writer = SessionStore().create({"workspace": label, "workspace_kind": "local", "root": str(workspace),
                                    "mode": "ask"})
    writer.message({"role": "user", "content": "tidy \x1b[2J\u202e"})
    writer.event(RunStarted(prompt="tidy \x1b[2J\u202e", model="m", mode="ask", workspace=label, run_id="r1",
                            session_id=writer.session_id))
    writer.close()
    app = make_app("--resume", writer.session_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        assert_inert(on_screen(app) + widget_texts(app))
        assert "▸ tidy \\x1b[2J⟨U+202E⟩" in widget_texts(app)
