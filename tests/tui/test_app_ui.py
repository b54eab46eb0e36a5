"""The app around the agent: onboarding, slash commands, layout, keys, quitting."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from tests.fakellm import Reply, call
from tests.tui.conftest import APP_SIZE, ready, rendered_text, type_text, wait_for
from tests.tui.test_app_sessions import answers, idle, notices, submit


async def test_first_run_without_a_model_opens_setup_and_then_works(make_app: Any, workspace: Path,
                                                                   fake_llm: Any, isolated_home: Path) -> None:
    from textual.widgets import Input

    from tui.screens.setup import SetupScreen

    app = make_app(fake=None)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query("#setup-model")
                                and app.screen, what="setup")
        assert not app.bridge.ready
        screen.query_one("#setup-model", Input).value = fake_llm.model
        screen.query_one("#setup-api-base", Input).value = fake_llm.url
        screen.query_one("#setup-api-key", Input).value = "sk-setup-key-1234567890"
        fake_llm.script(Reply(text="OK"))
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: len(fake_llm.requests) == 1, what="the connection check")
        await wait_for(pilot, lambda: "answered" in str(screen.query_one("#setup-status").render()),
                       what="the check's result")
        await pilot.press("ctrl+s")
        await ready(pilot)
        saved = tomllib.loads((isolated_home / "config" / "coder-tui" / "config.toml").read_text())
        assert saved["model"] == fake_llm.model and saved["api_base"] == fake_llm.url
        fake_llm.script(Reply(text="Hello from the model."))
        await submit(pilot, "hi")
        await idle(pilot)
        assert answers(app) == ["Hello from the model."]


async def test_slash_commands(make_app: Any, workspace: Path, fake_llm: Any, isolated_home: Path) -> None:
    from tui.screens.keys import KeysScreen

    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "/mode allow")
        await wait_for(pilot, lambda: app.bridge.session.mode == "allow", what="/mode")
        await submit(pilot, "/model openai/other-model")
        await wait_for(pilot, lambda: app.bridge.session.model == "openai/other-model", what="/model")
        assert "openai/other-model" in rendered_text(app.query_one("#status"))
        await submit(pilot, "/model")  # says which path reaches the model, and where
        said = f"model: openai/other-model, through the built-in OpenAI Chat Completions client at {fake_llm.url}"
        await wait_for(pilot, lambda: any(said in n for n in notices(app)), what="/model naming the path")
        await submit(pilot, "/theme light")
        await wait_for(pilot, lambda: app.theme == "light", what="/theme")
        config = isolated_home / "config" / "coder-tui" / "config.toml"
        await wait_for(pilot, lambda: config.exists() and "light" in config.read_text(), what="the saved theme")
        first = app.bridge.session.session_id
        await submit(pilot, "/clear")
        await wait_for(pilot, lambda: app.bridge.session.session_id != first, what="/clear")
        assert app.bridge.session.mode == "allow"  # the mode carries over to the new conversation
        await submit(pilot, "/nonsense")
        await wait_for(pilot, lambda: any("unknown command /nonsense" in n for n in notices(app)), what="error")
        await submit(pilot, "/help")
        await wait_for(pilot, lambda: isinstance(app.screen, KeysScreen), what="/help")
        await pilot.press("escape")
        await submit(pilot, "/help patch_file")  # seed 003: a tool's parameters and examples
        await wait_for(pilot, lambda: any("patch_file (edit):" in n and 'example: {"file_path": "src/util.py"' in n
                                          for n in notices(app)), what="/help TOOL")
        app.bridge.session.registry.register(_Outside())  # an MCP server's tool: its words shown inert
        await submit(pilot, "/help outside_tool")
        await wait_for(pilot, lambda: any("outside_tool (read): red \\x1b[31m⟨U+202E⟩" in n for n in notices(app)),
                       what="/help with control characters made visible")
        await submit(pilot, "/help nosuchtool")
        await wait_for(pilot, lambda: any("no tool 'nosuchtool'; the tools:" in n for n in notices(app)),
                       what="/help with an unknown tool")
        await submit(pilot, "/theme nosuchtheme")
        await wait_for(pilot, lambda: any("no theme 'nosuchtheme'" in n for n in notices(app)), what="bad theme")


async def test_undo_and_sessions_commands(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    from tui.screens.sessions import SessionsScreen

    before = (workspace / "app.py").read_text()
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="app.py", content="x = 1\n")]), Reply(text="ok"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "rewrite")
        await idle(pilot)
        first = app.bridge.session.session_id
        await submit(pilot, "/undo")
        # git rewrites a restored file by unlinking it first: read it only when it is there
        target = workspace / "app.py"
        await wait_for(pilot, lambda: target.exists() and target.read_text() == before, what="/undo")
        await wait_for(pilot, lambda: any(n.startswith("Restored checkpoint") for n in notices(app)),
                       what="the restore notice")
        await submit(pilot, "/clear")
        await wait_for(pilot, lambda: app.bridge.session.session_id != first, what="/clear")
        await submit(pilot, "/sessions")
        screen = await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen, what="list")
        await pilot.pause()
        from textual.widgets import OptionList

        options = screen.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert first in ids
        options.highlighted = ids.index(first)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.bridge.session.session_id == first, what="the resumed session")
        await wait_for(pilot, lambda: any("Resumed session" in n for n in notices(app)), what="the resume notice")


async def test_narrow_terminal_folds_the_side_panel(make_app: Any, fake_llm: Any) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        side, main = app.query_one("#side"), app.query_one("#main")
        assert not side.display or side.region.width == 0
        assert main.region.width == 80
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert side.region.width == 80 and main.region.width == 0
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert main.region.width == 80


async def test_ctrl_c_twice_quits_when_idle_and_stops_a_run_first(make_app: Any, fake_llm: Any) -> None:
    fake_llm.script(Reply(text="word " * 3000, chunk_size=5, chunk_delay=0.01))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "talk")
        await wait_for(pilot, lambda: any(answers(app)), what="streaming")
        await pilot.press("ctrl+c")
        await idle(pilot)
        assert "Stopped." in notices(app)
        assert app.is_running
        await pilot.press("ctrl+c")
        assert app.is_running  # one press when idle only warns
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running or app._exit_renderables is not None, what="quit")
    assert app.return_value == 0


async def test_ctrl_q_during_a_run_asks_first(make_app: Any, fake_llm: Any) -> None:
    from tui.screens.confirm import ConfirmScreen

    fake_llm.script(Reply(text="word " * 3000, chunk_size=5, chunk_delay=0.01))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "talk")
        await wait_for(pilot, lambda: any(answers(app)), what="streaming")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("n")
        await pilot.pause()
        assert app.bridge.running
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, what="quit")


async def test_keymap_from_config_remaps_a_binding(make_app: Any, fake_llm: Any, workspace: Path) -> None:
    from agent import paths

    # the user's own config (a folder's untrusted file may not rebind keys: approvals have keys too)
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text('[keymap]\n"app.cycle_mode" = "f5"\n"no.such" = "f6"\n')
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f5")
        assert app.mode == "allow"
        assert any("no binding with id no.such" in n for n in notices(app))


async def test_prompts_typed_while_loading_or_running_are_sent_in_order(make_app: Any, fake_llm: Any) -> None:
    fake_llm.script(Reply(text="first", delay=0.5), Reply(text="second"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "one")
        await wait_for(pilot, lambda: app.bridge.running, what="the first run")
        await submit(pilot, "two")
        await wait_for(pilot, lambda: answers(app) == ["first", "second"], what="both answers")
        users = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"]
        assert users == ["one", "two"]


async def test_the_status_bar_says_loading_until_the_model_library_is_loaded(make_app: Any, fake_llm: Any,
                                                                             monkeypatch: Any) -> None:
    """Issue 26 item 12: a prompt sent in the first seconds waits for litellm (a model on the
    litellm path: here every model, by CODER_TUI_MODEL_PATH); the status bar never says idle
    before it is loaded, and the waiting run says what it waits for."""
    import threading

    import agent.llm.preload as preload
    from tui.widgets.statusbar import LOADING_MODELS, StatusBar

    gate = threading.Event()  # the model library "loads" until the test lets it
    real_prewarm = preload.prewarm

    def slow_prewarm() -> None:
        gate.wait(60)
        real_prewarm()

    monkeypatch.setenv("CODER_TUI_MODEL_PATH", "litellm")
    monkeypatch.setattr(preload, "_warm", False)
    monkeypatch.setattr(preload, "prewarm", slow_prewarm)
    states: list[tuple[str, str]] = []
    real_set_state = StatusBar.set_state

    def recorded(self: Any, state: str, detail: str = "") -> None:
        states.append((state, detail))
        real_set_state(self, state, detail)

    monkeypatch.setattr(StatusBar, "set_state", recorded)
    fake_llm.script(Reply(text="Loaded and answered."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.ready, what="the session")
        assert app.query_one(StatusBar).state == LOADING_MODELS
        await submit(pilot, "hi")
        await wait_for(pilot, lambda: ("thinking", LOADING_MODELS) in states, what="the run waiting for litellm")
        assert "idle" not in [state for state, _ in states]
        gate.set()
        await idle(pilot)
        assert answers(app) == ["Loaded and answered."]


async def test_at_completion_offers_files_made_after_the_session_opened(make_app: Any, workspace: Path) -> None:
    """Issue 26 item 6: the files were listed once, so `@` never offered a file made later."""
    from tui.widgets.prompt import CompletionPopup

    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        prompt = app.query_one("#prompt")
        await wait_for(pilot, lambda: "app.py" in prompt.files, what="the first list")
        (workspace / "brandnew.py").write_text("x = 1\n")
        await type_text(pilot, "look at @brandn")
        popup = app.screen.query_one(CompletionPopup)
        await wait_for(pilot, lambda: popup.display and popup.option_count
                       and "brandnew.py" in str(popup.get_option_at_index(0).prompt), what="the new file offered")
        await pilot.press("tab")
        assert prompt.value == "look at @brandnew.py "


async def test_the_agents_notes_show_in_the_side_panel(make_app: Any, fake_llm: Any) -> None:
    # seed 001's scratchpad: what the agent writes for itself is visible to the user
    from tui.widgets.scratchpad import ScratchpadPane

    fake_llm.script(Reply(tool_calls=[call("scratchpad_write", text="Plan: read cli.py, then time it."),
                                      call("note_observation", note="The CLI lives in tui/cli.py.")]),
                    Reply(text="noted"))
    app = make_app("--mode", "ask")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        assert not app.query(ScratchpadPane)  # nothing until the agent writes notes
        await submit(pilot, "plan it")
        await idle(pilot)
        await wait_for(pilot, lambda: app.query(ScratchpadPane), what="the notes pane")
        assert len(app.query(ScratchpadPane)) == 1  # both notes in one pane (they came in one step)
        shown = rendered_text(app.query_one(ScratchpadPane))
        assert "Plan: read cli.py, then time it." in shown and "• The CLI lives in tui/cli.py." in shown


class _Outside:  # a tool whose description came from outside (an MCP server)
    name = "outside_tool"
    kind = "read"
    description = "red \x1b[31m\u202e"
    examples = ()

    def __init__(self) -> None:
        from agent.tools.base import ToolArgs

        self.Args = ToolArgs
