"""The app with a model it cannot use: the setup screen says why; cached prompt tokens in the status bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import TEST_KEY
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import Reply
from tests.tui.conftest import APP_SIZE, ready, rendered_text, wait_for
from tests.tui.test_app_sessions import submit


def setup_reason(app: Any) -> str:
    from tui.screens.setup import SetupScreen

    screen = app.screen
    # Once all it composed is mounted: the intro is mounted turns before the nested input rows (CI saw the gap).
    if not isinstance(screen, SetupScreen) or not screen.is_mounted:
        return ""
    return str(screen.query_one("#setup-intro").render())


async def test_an_unknown_provider_opens_setup_before_the_first_prompt(workspace: Path, fake_llm: Any) -> None:
    from tui.app import CoderApp
    from tui.cli import launch_parser

    options = launch_parser().parse_args([str(workspace), "--model", "foo/bar", "--api-base", fake_llm.url,
                                          "--api-key", TEST_KEY])
    app = CoderApp(options, animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        reason = await wait_for(pilot, lambda: setup_reason(app), timeout=60, what="the setup screen")
        assert "litellm does not know the provider of model 'foo/bar'" in reason
        assert fake_llm.requests == []  # found before anything was sent
        assert app.screen.query_one("#setup-model").value == "foo/bar"  # the value to correct


async def test_a_model_the_provider_does_not_know_opens_setup(make_app: Any, fake_llm: Any) -> None:
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        fake_llm.script(Reply(status=404, error_message="The model `fake-model` does not exist"))
        await submit(pilot, "hi")
        reason = await wait_for(pilot, lambda: setup_reason(app), timeout=30, what="the setup screen")
        assert f"model {fake_llm.model} was not found at {fake_llm.url}" in reason
        await pilot.press("escape")  # Quit from a setup opened mid-session: back to the conversation
        await wait_for(pilot, lambda: not setup_reason(app), what="the conversation")
        assert app.bridge.session is not None


async def test_the_status_bar_shows_cached_prompt_tokens(make_app: Any) -> None:
    with FakeAnthropic() as anthropic:
        app = make_app(fake=anthropic)
        async with app.run_test(size=APP_SIZE) as pilot:
            status = (await ready(pilot)).query_one("#status")
            anthropic.script(Reply(text="Cached.", usage=(12_400, 800), cache_read=9_800))
            await submit(pilot, "hi")
            await wait_for(pilot, lambda: "cached" in rendered_text(status), timeout=30, what="the usage")
            assert "12.4k in (9.8k cached) · 800 out · $0.0" in rendered_text(status)
            assert "cache_control" in str(anthropic.requests[0]["system"])
            status.set_usage(1200, 80, None)
            await pilot.pause()
            text = rendered_text(status)
            assert "1.2k in · 80 out" in text and "cached" not in text


async def test_a_keyless_local_server_opens_the_app_not_the_setup(workspace: Path, fake_llm: Any) -> None:
    """`openai/NAME` at an API base with no key anywhere: the setup screen saves it and `run` uses
    it, so the app opens on it too (it sent the user back to the setup screen at every launch)."""
    from tui.app import CoderApp
    from tui.cli import launch_parser
    from tui.screens.setup import SetupScreen

    options = launch_parser().parse_args([str(workspace), "--model", fake_llm.model, "--api-base", fake_llm.url])
    app = CoderApp(options, animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.session is not None or isinstance(app.screen, SetupScreen),
                       timeout=60, what="the session or the setup screen")
        assert not isinstance(app.screen, SetupScreen), setup_reason(app)
        await ready(pilot)
        fake_llm.script(Reply(text="Hello from the local server."))
        await submit(pilot, "hi")
        await wait_for(pilot, lambda: fake_llm.requests and app.bridge.ready and not app.bridge.running,
                       timeout=30, what="the answer")
        # the built-in client sends a keyless server no Authorization at all (no key, no placeholder)
        assert "authorization" not in {name.lower() for name in fake_llm.headers[0]}
