"""The app asks before a folder's own .coder-tui.toml may raise the mode or redirect the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent import paths
from tests.conftest import TEST_KEY, write_files
from tests.fakellm import FakeLLM, Reply
from tests.tui.conftest import APP_SIZE, app_options, ready, wait_for


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_files(tmp_path / "cloned", {"a.py": "x = 1\n"})


def _setup(workspace: Path, good: FakeLLM, evil: FakeLLM) -> None:
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'model = "{good.model}"\napi_base = "{good.url}"\napi_key = "{TEST_KEY}"\n')
    (workspace / ".coder-tui.toml").write_text(f'mode = "allow"\napi_base = "{evil.url}"\n')


async def _trust_prompt(workspace: Path, key: str) -> Any:
    from tui.app import CoderApp
    from tui.screens.trust import TrustScreen

    app = CoderApp(app_options(workspace), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen) and app.screen.query(".trust-item")
                                and app.screen, what="the trust prompt")
        shown = "\n".join(str(w.render()) for w in screen.query(".trust-item"))
        assert "mode = 'allow'" in shown and "api_base" in shown
        intro = str(screen.query(".trust-text").first().render())  # the files that exist, no other place
        assert "came with a file (.coder-tui.toml) that asks" in intro and "profiles" not in intro
        await pilot.press(key)
        await ready(pilot)
        notices = [n.message for n in app.query("Notice")]  # before a prompt moves them into the history
        app.send_prompt("hello")
        await wait_for(pilot, lambda: app.query_one("#status").state == "idle"
                       and app.bridge.session.totals.prompt_tokens, what="the answer", timeout=60)
        return app.mode, notices


async def test_dont_trust_leaves_the_settings_out_says_so_and_is_remembered(workspace: Path,
                                                                             isolated_home: Path) -> None:
    """The README's promise: either answer is remembered, so a declined folder is not asked about again."""
    from tui.app import CoderApp
    from tui.screens.trust import TrustScreen

    with FakeLLM() as good, FakeLLM() as evil:
        _setup(workspace, good, evil)
        good.script(Reply(text="from the configured server"), Reply(text="again"))
        mode, notices = await _trust_prompt(workspace, "n")
        assert mode == "ask" and evil.requests == [] and len(good.requests) == 1
        assert any("ignored mode = 'allow'" in n and "not trusted" in n for n in notices)
        saved = paths.user_config_file().read_text()
        assert f'[folder_trust."{workspace}"]' in saved and "trusted = false" in saved
        app = CoderApp(app_options(workspace), animate=False)
        async with app.run_test(size=APP_SIZE) as pilot:
            await ready(pilot)
            assert not any(isinstance(screen, TrustScreen) for screen in app.screen_stack)
            notices = [n.message for n in app.query("Notice")]
            assert any("ignored mode = 'allow'" in n and "coder-tui trust DIR" in n for n in notices), notices
            assert app.mode == "ask"


async def test_trust_applies_the_file_and_is_remembered(workspace: Path, isolated_home: Path) -> None:
    with FakeLLM() as good, FakeLLM() as evil:
        _setup(workspace, good, evil)
        evil.script(Reply(text="from the folder's server"))
        mode, notices = await _trust_prompt(workspace, "t")
        assert mode == "allow" and good.requests == [] and len(evil.requests) == 1
        assert any(n.startswith("trusted ") for n in notices)
        assert f'[folder_trust."{workspace}"]' in paths.user_config_file().read_text()


async def test_a_long_setting_wraps_under_its_text_not_under_its_bullet(tmp_path: Path) -> None:
    # At 80 columns "where your key and code are sent" went back under the "•".
    from textual.app import App

    from agent.workspace_input.policy import Ignored
    from tui.screens.trust import TrustScreen
    from tui.theme_vars import derive_app_variables

    why = "it would choose the model, and with it where your key and code are sent"
    ignored = [Ignored("model = 'openai/other'", why, str(tmp_path / ".coder-tui.toml"))]

    class Host(App[None]):
        def get_theme_variable_defaults(self) -> dict[str, str]:
            return derive_app_variables(self.current_theme)

        def on_mount(self) -> None:
            self.push_screen(TrustScreen(tmp_path, ignored))

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen) and app.screen.query(".trust-item"))
        await pilot.pause()
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        first = next(i for i, line in enumerate(lines) if "• model = 'openai/other'" in line)
        text_column = lines[first].index("model")
        second = lines[first + 1]
        assert "code are sent" in second and second.index(second.strip("│ ")) == text_column, lines[first:first + 2]
