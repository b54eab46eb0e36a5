"""Approvals docked under the conversation, in the app against the scripted model server.

The model's reason (streamed just before the call) stays in view above the panel, the panel has
the focus and the prompt comes back with it once answered; shell results show their exit code
and last lines; "allow for this session" says so, shows in the status bar and can be revoked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakellm import Reply, call
from tests.tui.conftest import ready, rendered_text, wait_for
from tests.tui.test_app_sessions import approval, patch, submit

REASON = "The checker wants a return type on main, so I add one."


async def answered(pilot: Any) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: not app.query("#approval") and app.query_one("#prompt").has_focus,
                   what="the prompt back with the focus")


async def idle(pilot: Any) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: not app.bridge.running and app.query_one("#status").state == "idle",
                   what="the run to end")


def panel_text(panel: Any) -> str:
    """Everything the panel shows: its title, the diff's rows, its lines and its choices."""
    from textual.widgets import Button, Static

    from tui.widgets.diffview import DiffView

    parts = [str(panel.border_title)]
    for view in panel.query(DiffView):
        parts += [view.render_line(y).text for y in range(view.size.height)]
    parts += [str(static.render()) for static in panel.query(Static) if not isinstance(static, Button)]
    parts += [str(button.label) for button in panel.query(Button)]
    return "\n".join(parts)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_an_edit_docks_under_the_reason_and_the_prompt_comes_back(make_app: Any, workspace: Path,
                                                                        fake_llm: Any, size: tuple[int, int]) -> None:
    from tui.widgets.answer import AssistantMessage

    fake_llm.script(Reply(text=REASON, tool_calls=[patch("def main():", "def main() -> None:")]),
                    Reply(text="Done."))
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await submit(pilot, "add a return type")
        panel = await approval(pilot)
        assert panel.parent is app.query_one("#main")
        prompt, transcript = app.query_one("#prompt"), app.query_one("#transcript")
        assert prompt.region.height == 0  # the panel stands in for the prompt
        # The reason is on screen, in the conversation right above the panel, while the user decides.
        await wait_for(pilot, lambda: any(REASON in m.written for m in app.query(AssistantMessage)), what="reason")
        reason = next(m for m in app.query(AssistantMessage) if REASON in m.written)
        await wait_for(pilot, lambda: reason.region.height > 0 and transcript.region.contains_region(reason.region),
                       what="the reason in view")
        assert reason.region.bottom <= panel.region.y and panel.region.bottom <= app.size.height
        text = panel_text(panel)
        assert text.replace("patch_file(./app.py)", "").count("app.py") == 1  # the file, named once (and in the rule offered)
        assert "Allow once (y)" in text and "Deny (n)" in text and "Stop (esc)" in text
        await pilot.press("y")
        await answered(pilot)
        await idle(pilot)
        assert "def main() -> None:" in (workspace / "app.py").read_text()


async def test_at_80x24_a_long_new_files_approval_keeps_its_buttons_in_view(make_app: Any, workspace: Path,
                                                                            fake_llm: Any) -> None:
    """The diff gives way (it scrolls), never the choices: they stood below the panel's edge."""
    from textual.widgets import Button

    body = "".join(f"line {i} = {i}\n" for i in range(60))
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="src/module_with_a_long_name/handlers.py",
                                           content=body)]), Reply(text="Done."))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await submit(pilot, "write the handlers")
        panel = await approval(pilot)
        await pilot.pause()
        inside = panel.content_region
        for button in panel.query(Button):
            assert button.region.height == 1 and inside.contains_region(button.region), (button.id, button.region)
        assert panel.region.bottom <= app.size.height - 2  # the status bar and the footer below it
        await pilot.press("y")
        await answered(pilot)


async def test_a_shell_approval_names_the_command_once_and_its_result_shows_exit_code_and_last_lines(
        make_app: Any, workspace: Path, fake_llm: Any) -> None:
    from tui.widgets.transcript import ToolRow

    command = "for i in 1 2 3 4 5 6; do echo line $i; done; exit 3"
    fake_llm.script(Reply(text="Let me run it.", tool_calls=[call("bash_exec", command=command)]),
                    Reply(text="It failed."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "run it")
        panel = await approval(pilot)
        assert panel_text(panel).count("echo line") == 1  # once: not again as a summary above it
        # As wide as fits: fitted at the panel's first resize, which can come after it took the focus.
        await wait_for(pilot, lambda: "Allow bash_exec for session, no network (a)" in panel_text(panel),
                       what="the session choice fitted to the panel")
        await pilot.press("y")
        await answered(pilot)
        row = await wait_for(pilot, lambda: next((r for r in app.query(ToolRow) if r.ok is not None), None),
                             what="the finished row")
        assert row.ok is False and row.note == "exit 3"  # the command failed, though the tool worked
        line = rendered_text(row.query_one(".tool-line"))
        assert line.startswith("✗ bash_exec") and "exit 3" in line
        preview = rendered_text(row.query_one(".tool-preview"))
        assert "line 6" in preview and "line 3" in preview and "line 2" not in preview
        assert "2 more lines above" in preview and "Enter or a click shows it all" in preview
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert "line 1" in rendered_text(row.query_one(".tool-output"))


async def test_allow_for_the_session_says_so_shows_in_the_status_bar_and_revoking_asks_again(
        make_app: Any, workspace: Path, fake_llm: Any) -> None:
    from tui.commands import palette_commands
    from tui.widgets.transcript import Notice

    fake_llm.script(Reply(tool_calls=[patch("def main():", "def main() -> None:")]), Reply(text="one"),
                    Reply(tool_calls=[patch("print('hello')", "print('hi')")]), Reply(text="two"),
                    Reply(tool_calls=[patch("print('hi')", "print('hey')")]), Reply(text="three"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        status = app.query_one("#status")
        await submit(pilot, "first")
        panel = await approval(pilot)
        assert "Allow patch_file for this session (a)" in panel_text(panel)
        await pilot.press("a")
        await answered(pilot)
        await idle(pilot)
        said = [str(n.render()) for n in app.query(Notice)]
        assert any(n.startswith("Allowed patch_file for this session: it runs without asking") for n in said)
        assert rendered_text(status).startswith(" ASK  ✓ patch_file allowed ")
        assert app.bridge.session.gate.allowed_tools == {"patch_file"}
        titles = [c.title for c in palette_commands(app)]
        assert "Revoke: allow patch_file for this session" in titles

        await submit(pilot, "second")  # allowed: applied without asking
        await idle(pilot)
        assert "print('hi')" in (workspace / "app.py").read_text() and not app.query("#approval")

        await submit(pilot, "/allowances revoke patch_file")
        await wait_for(pilot, lambda: not app.bridge.session.gate.allowed_tools, what="the revocation")
        assert "patch_file allowed" not in rendered_text(status)
        await submit(pilot, "third")
        await approval(pilot)  # the gate asks again
        assert "print('hey')" not in (workspace / "app.py").read_text()
        await pilot.press("n", "enter")
        await idle(pilot)


async def test_revoking_all_when_nothing_is_allowed_says_so(make_app: Any) -> None:
    from tui.widgets.transcript import Notice

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        for command in ("/allowances revoke all", "/allowances revoke", "/allowances revoke bash_exec"):
            await submit(pilot, command)
        said = await wait_for(pilot, lambda: (found := [str(n.render()) for n in app.query(Notice)
                                                       if "nothing to revoke" in str(n.render())])[2:] and found,
                              what="the three answers")
        assert said == ["No tool is allowed for this session; nothing to revoke"] * 2 + [
            "bash_exec was not allowed for this session (allowed: none); nothing to revoke"]


async def test_full_screen_is_one_key_away_and_esc_still_stops(make_app: Any, workspace: Path,
                                                               fake_llm: Any) -> None:
    fake_llm.script(Reply(tool_calls=[patch("def main():", "def main() -> None:")]), Reply(text="unused"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "change it")
        panel = await approval(pilot)
        await pilot.press("shift+tab")  # the panel's previous file, not the app's mode
        assert app.mode == "ask"
        await pilot.press("f")
        await wait_for(pilot, lambda: app.screen.maximized is panel, what="full screen")
        assert panel.region.height > 30
        await pilot.press("f")
        await wait_for(pilot, lambda: app.screen.maximized is None, what="back under the conversation")
        await pilot.press("f", "escape")
        await answered(pilot)
        await idle(pilot)
        assert app.screen.maximized is None
        assert "def main():" in (workspace / "app.py").read_text()
        assert any("stopped" in str(w.render()) for w in app.query("RunEnd"))


async def test_a_reason_followed_at_once_by_the_call_is_drawn() -> None:
    """The whole reason and the tool call in one go (a fast model): the text reaches the screen,
    even though the answer widget was not mounted yet when it was drained."""
    from textual.app import App, ComposeResult

    from tui.theme_vars import derive_app_variables
    from tui.widgets.transcript import Transcript

    class Host(App[None]):
        def get_theme_variable_defaults(self) -> dict[str, str]:
            return derive_app_variables(self.current_theme)

        def compose(self) -> ComposeResult:
            yield Transcript(id="transcript")

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.text(REASON)
        answer = transcript.live
        assert answer is not None and not answer.is_mounted
        await answer.flush()  # the flush timer firing before the new widget's mount was handled
        transcript.tool_call("c1", "patch_file", "app.py")
        await wait_for(pilot, lambda: answer.children and answer.region.height > 0, what="the reason drawn")


async def test_the_edits_reason_shows_with_the_diff_as_one_safe_line(make_app: Any, workspace: Path,
                                                                     fake_llm: Any) -> None:
    """Edit tools take an optional `reason` "shown to the user with the diff": one `why:` line,
    its control characters shown, not acted on."""
    edit = call("patch_file", file_path="app.py", reason="Type checker\nwants\u202e it",
                patches=[{"old_text": "def main():", "new_text": "def main() -> None:"}])
    fake_llm.script(Reply(tool_calls=[edit]), Reply(text="Done."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "add a return type")
        panel = await approval(pilot)
        why = [row for row in panel_text(panel).splitlines() if row.startswith("why: ")]
        assert len(why) == 1 and "Type checker" in why[0] and "\u202e" not in why[0] and "\n" not in why[0]
        await pilot.press("y")
        await answered(pilot)
        await idle(pilot)


async def test_ctrl_d_before_any_diff_says_what_it_shows_and_still_deletes_in_a_typed_prompt(make_app: Any) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+d")  # an empty prompt has the focus: the app's Ctrl+D, not TextArea's
        said = await wait_for(pilot, lambda: [n.message for n in app._notifications], what="the notice")
        assert "Ctrl+D shows the edits applied without asking" in said[-1] and "none yet" in said[-1]
        await pilot.press("a", "b", "left", "ctrl+d")
        assert app.query_one("#prompt").text == "a"  # with text, it deletes to the right as it did
