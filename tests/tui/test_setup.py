"""The first-run setup screen, driven by keys on a real Textual app against the scripted model server."""

from __future__ import annotations

import asyncio
import html
import re
import stat
import threading
import time
import tomllib
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import SecretStr
from textual.app import App
from textual.widgets import Input, Static

from agent import paths
from agent.config import Config
from tests.fakellm import FakeLLM, Reply
from tui.screens.setup import ConfirmSave, SetupResult, SetupScreen, export_variable, needs_setup
from tui.theme_vars import derive_app_variables

KEY = "setup-test-key-0123456789SECRET"  # no well-known shape: only registering it can mask it
# Secrets stay registered for the whole process: this test's key is its own, so only this
# test's registration can mask it.
REJECTED_KEY = "setup-rejected-key-9876543210XYZ"
ENV_KEY = "sk-ant-env-0123456789abcdefENVSECRET"


class Host(App[None]):
    """Pushes the setup screen and records what it returns."""

    def __init__(self, make_screen: Callable[[], SetupScreen] = SetupScreen) -> None:
        super().__init__()
        self.make_screen = make_screen
        self.results: list[SetupResult | None] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return derive_app_variables(self.current_theme)

    def on_mount(self) -> None:
        self.push_screen(self.make_screen(), self.results.append)


def screen_text(app: App[Any]) -> str:
    """What the terminal shows right now, as plain text."""
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


def static_text(app: App[Any], selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def all_statics(app: App[Any]) -> str:
    """Text of every Static on the screen, scrolled into view or not."""
    return "\n".join(str(w.render()) for w in app.screen.query(Static))


async def until(pilot: Any, condition: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the screen"
        await pilot.pause(0.05)


async def finish_check(app: App[Any], pilot: Any) -> None:
    await asyncio.wait_for(app.workers.wait_for_complete(), 60)
    await pilot.pause()


def fill(app: App[Any], model: str, api_base: str = "", key: str = "") -> None:
    for name, value in (("model", model), ("api-base", api_base), ("api-key", key)):
        app.screen.query_one(f"#setup-{name}", Input).value = value


def config_file() -> dict[str, Any]:
    return tomllib.loads(paths.user_config_file().read_text())


# -- the environment ------------------------------------------------------------------------

async def test_found_provider_variables_are_named_but_their_values_never_shown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        ways = static_text(app, "#setup-ways")
        assert "ANTHROPIC_API_KEY → anthropic/claude-sonnet-4-5" in ways
        assert app.screen.query_one("#setup-model", Input).value == "anthropic/claude-sonnet-4-5"
        assert app.focused is app.screen.query_one("#setup-model", Input)
        assert "export ANTHROPIC_API_KEY" in static_text(app, "#setup-key-export")
        for text in (screen_text(app), all_statics(app)):
            assert ENV_KEY not in text and ENV_KEY[:12] not in text


async def test_no_provider_variable_says_none_is_set() -> None:
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert "none set now" in static_text(app, "#setup-ways")
        assert "no model is configured" in static_text(app, "#setup-intro")
        assert app.screen.query_one("#setup-model", Input).value == ""


# -- checking the connection ------------------------------------------------------------------

async def test_keyboard_fill_and_enter_checks_in_a_worker(fake_llm: FakeLLM) -> None:
    answer = threading.Event()  # the model answers once the test has seen the check running
    fake_llm.script(Reply(text="OK", hold=answer))
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        await pilot.press(*fake_llm.model, "tab")
        await pilot.press(*fake_llm.url, "tab")
        await pilot.press(*KEY)
        assert app.focused is app.screen.query_one("#setup-api-key", Input)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen.query_one("#setup-status").has_class("-checking"))
        assert app.screen.query_one("#setup-spinner").display
        assert "Checking openai/fake-model" in static_text(app, "#setup-status")
        answer.set()
        await finish_check(app, pilot)
        status = static_text(app, "#setup-status")
        assert "✓ openai/fake-model answered: OK" in status
        assert not app.screen.query_one("#setup-spinner").display
        assert len(fake_llm.requests) == 1
        assert fake_llm.requests[0]["model"] == "fake-model"
        assert KEY not in screen_text(app)


async def test_check_binding_runs_the_check(fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="Hello there"))
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        fill(app, fake_llm.model, fake_llm.url, KEY)
        await pilot.press("ctrl+t")
        await finish_check(app, pilot)
        assert "answered: Hello there" in static_text(app, "#setup-status")
        assert len(fake_llm.requests) == 1


async def test_rejected_key_shows_authentication_message_without_the_key(fake_llm: FakeLLM) -> None:
    # The server echoes the key back, as some providers do: the screen must still not show it.
    fake_llm.script(Reply(status=401, error_message=f"Incorrect API key provided: {REJECTED_KEY}"))
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        fill(app, fake_llm.model, fake_llm.url, REJECTED_KEY)
        await pilot.press("ctrl+t")
        await finish_check(app, pilot)
        status_widget = app.screen.query_one("#setup-status")
        status = static_text(app, "#setup-status")
        assert status_widget.has_class("-error")
        assert "authentication failed for openai/fake-model" in status
        for text in (status, screen_text(app), all_statics(app)):
            assert REJECTED_KEY not in text
        assert len(fake_llm.requests) == 1
        assert "[redacted]" in status  # the provider's own words are kept, minus the key


# -- saving -----------------------------------------------------------------------------------

async def test_save_after_a_good_check_stores_the_key_privately(fake_llm: FakeLLM) -> None:
    fake_llm.script(Reply(text="OK"))
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        fill(app, fake_llm.model, fake_llm.url, KEY)
        await pilot.press("ctrl+t")
        await finish_check(app, pilot)
        await pilot.press("ctrl+s")  # checked: no confirmation needed
        await until(pilot, lambda: bool(app.results), 5)
    result = app.results[0]
    assert result is not None and result.key_saved
    assert (result.model, result.api_base) == (fake_llm.model, fake_llm.url)
    assert result.config_path == paths.user_config_file()
    assert config_file() == {"model": fake_llm.model, "api_base": fake_llm.url, "api_key": KEY}
    assert stat.S_IMODE(paths.user_config_file().stat().st_mode) == 0o600


async def test_key_not_saved_drops_old_key_and_shows_the_export_line() -> None:
    path = paths.user_config_file()
    path.parent.mkdir(parents=True)
    path.write_text('model = "openai/gpt-4.1"\napi_key = "sk-old-key-0123456789"\n')
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        fill(app, "anthropic/claude-sonnet-4-5", "", KEY)
        app.screen.query_one("#setup-key-choice").focus()
        await pilot.press("down", "enter")  # move to "Don't save it" and choose it
        await pilot.pause()
        assert "export ANTHROPIC_API_KEY" in static_text(app, "#setup-key-export")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmSave), 5)  # never checked: asks first
        await pilot.press("y")
        await until(pilot, lambda: app.screen.query_one("#setup-export").display, 5)
        assert static_text(app, "#setup-export") == "export ANTHROPIC_API_KEY=<your key>"
        assert "without the key" in static_text(app, "#setup-status")
        assert KEY not in screen_text(app) and KEY not in all_statics(app)
        assert config_file() == {"model": "anthropic/claude-sonnet-4-5"}
        assert not app.results  # the user reads the export line first
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(app.results), 5)
    result = app.results[0]
    assert result is not None and not result.key_saved
    assert result.key_variable == "ANTHROPIC_API_KEY"
    assert isinstance(result.api_key, SecretStr) and result.api_key.get_secret_value() == KEY


async def test_unchecked_save_can_be_called_off() -> None:
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        fill(app, "ollama_chat/qwen2.5-coder", "http://localhost:11434")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmSave), 5)
        assert "has not answered a check yet" in static_text(app, "#confirm-question")
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, SetupScreen), 5)
        assert not paths.user_config_file().exists()
        await pilot.press("ctrl+s", "y")
        await until(pilot, lambda: bool(app.results), 5)
    assert config_file() == {"model": "ollama_chat/qwen2.5-coder", "api_base": "http://localhost:11434"}
    assert app.results[0] is not None and not app.results[0].key_saved


# -- validation and leaving -------------------------------------------------------------------

async def test_empty_model_and_bad_url_are_explained_inline(fake_llm: FakeLLM) -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        fill(app, "", "localhost:11434")
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert "Enter a model" in static_text(app, "#setup-model-error")
        assert "http:// or https://" in static_text(app, "#setup-api-base-error")
        assert app.screen.query_one("#setup-model", Input).has_class("-invalid")
        assert app.focused is app.screen.query_one("#setup-model", Input)
        await pilot.press(*"mymodel")  # fixing a marked field re-checks it as you type
        await pilot.pause()
        assert "cannot tell the provider of 'mymodel'" in static_text(app, "#setup-model-error")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)  # invalid input is never saved
        assert not paths.user_config_file().exists()
        fill(app, "openai/gpt-4.1", "http://localhost:11434")
        await pilot.pause()
        assert not app.screen.query_one("#setup-model-error").has_class("-shown")
        assert not app.screen.query_one("#setup-api-base-error").has_class("-shown")
    assert fake_llm.requests == []


@pytest.mark.parametrize("how", ["escape", "click"])
async def test_quit_leaves_with_none(how: str) -> None:
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        if how == "escape":
            await pilot.press("escape")
        else:
            await pilot.click("#setup-quit")
        await until(pilot, lambda: bool(app.results), 5)
    assert app.results == [None]
    assert not paths.user_config_file().exists()


async def test_tab_order_follows_the_form() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert [w.id for w in app.screen.focus_chain] == [
            "setup-model", "setup-api-base", "setup-api-key", "setup-key-choice",
            "setup-check", "setup-save", "setup-quit"]


async def test_everything_fits_at_80_by_24(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        buttons = app.screen.query_one("#setup-buttons")
        assert buttons.region.bottom <= 23  # above the footer, not scrolled away
        assert app.screen.query_one("#setup-title").region.y >= 0
        text = screen_text(app)
        for words in ("Set up a model", "Check connection", "Save", "Quit", "^t", "^s", "esc"):
            assert words in text


# -- a prompt typed while the app loads -----------------------------------------------------

class TypingHost(App[None]):
    """A prompt with text already typed in it, then the setup screen over it (as the app's boot
    opens it when the configured model is not usable)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return derive_app_variables(self.current_theme)

    def compose(self) -> Any:
        from tui.widgets.prompt import PromptInput

        yield PromptInput(id="prompt")

    def on_prompt_input_submitted(self, message: Any) -> None:
        self.sent.append(message.text)


async def test_keys_typed_for_the_prompt_never_land_in_the_form() -> None:
    from tests.tui.conftest import type_text

    app = TypingHost()
    async with app.run_test(size=(100, 32)) as pilot:
        prompt = app.query_one("#prompt")
        await type_text(pilot, "fix the")
        app.push_screen(SetupScreen(Config(model="anthropic/claude-sonnet-4-5")))
        await until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.is_mounted)
        await type_text(pilot, " bux")  # the user is still typing when the screen appears
        await pilot.press("backspace", "g")
        model = app.screen.query_one("#setup-model", Input)
        assert model.value == "anthropic/claude-sonnet-4-5" and app.focused is None
        assert prompt.text == "fix the bug"
        assert "goes to your prompt" in static_text(app, "#setup-status")
        await pilot.press("enter")  # sent (the app queues it until the session is ready)
        await until(pilot, lambda: app.sent == ["fix the bug"], 5)
        await pilot.press("tab")  # into the form: from now on keys are the form's
        assert app.focused is model
        await type_text(pilot, "x")
        assert model.value.endswith("x") and prompt.text == ""
        assert static_text(app, "#setup-status") == ""


async def test_an_empty_prompt_leaves_the_focus_in_the_form() -> None:
    app = TypingHost()
    async with app.run_test(size=(100, 32)) as pilot:
        app.push_screen(SetupScreen(Config()))
        await until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.focused is not None)
        assert app.focused is app.screen.query_one("#setup-model", Input)


# -- needs_setup ------------------------------------------------------------------------------

@pytest.mark.parametrize(("config", "environ", "expected"), [
    (Config(), {}, "no model is configured"),
    (Config(model="anthropic/claude-sonnet-4-5"), {}, "needs an API key"),
    (Config(model="anthropic/claude-sonnet-4-5"), {"ANTHROPIC_API_KEY": "x"}, None),
    (Config(model="anthropic/claude-sonnet-4-5"), {"OPENAI_API_KEY": "x"}, "ANTHROPIC_API_KEY"),
    (Config(model="claude-sonnet-4-5"), {"ANTHROPIC_API_KEY": "x"}, None),
    (Config(model="openai/gpt-4.1"), {"CODER_TUI_API_KEY": "x"}, None),
    (Config(model="openai/gpt-4.1", api_key=SecretStr("x")), {}, None),
    # an OpenAI-compatible server of the user's needs no key: `run` sends none either (agent.llm.routing.keyless_server)
    (Config(model="openai/local", api_base="http://localhost:8000"), {}, None),
    (Config(model="openai/gpt-4.1"), {}, "needs an API key"),
    (Config(model="ollama_chat/qwen2.5-coder", api_base="http://localhost:11434"), {}, None),
    (Config(model="lm_studio/qwen"), {}, None),
    (Config(model="bedrock/anthropic.claude-v2"), {}, None),
    (Config(model="mymodel"), {}, "cannot tell the provider"),
])
def test_needs_setup(config: Config, environ: dict[str, str], expected: str | None) -> None:
    reason = needs_setup(config, environ)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected in reason


def test_export_variable_prefers_the_generic_one_for_custom_servers() -> None:
    assert export_variable("anthropic/claude-sonnet-4-5", None) == "ANTHROPIC_API_KEY"
    assert export_variable("openai/gpt-4.1", "https://proxy.example/v1") == "CODER_TUI_API_KEY"
    assert export_variable("vertex_ai/gemini-pro", None) == "CODER_TUI_API_KEY"
