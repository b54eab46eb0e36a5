"""The app: --profile, /profile and /compact, and the status bar showing the profile."""

from __future__ import annotations

from typing import Any

from tests.fakellm import Reply
from tests.profiles.conftest import requested_tools
from tests.tui.conftest import APP_SIZE, make_app, ready, rendered_text, wait_for, workspace  # noqa: F401
from tests.tui.test_app_sessions import idle, notices, submit


async def test_profile_flag_and_command_switch_the_agent(make_app: Any, fake_llm: Any) -> None:
    app = make_app("--profile", "architect")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        status = app.query_one("#status")
        assert "profile architect" in rendered_text(status) and app.mode == "plan"
        fake_llm.script(Reply(text="the plan"))
        await submit(pilot, "plan it")
        await wait_for(pilot, lambda: len(fake_llm.requests) == 1, what="the first request")
        await idle(pilot)
        assert "write_file" not in requested_tools(fake_llm.requests[0])
        await submit(pilot, "/profile nope")
        await wait_for(pilot, lambda: any("no profile 'nope'" in n for n in notices(app)), what="the error")
        await submit(pilot, "/profile coder")
        await wait_for(pilot, lambda: app.bridge.session.agent.profile.name == "coder", what="/profile")
        assert "profile architect" not in rendered_text(status) and "profile coder" not in rendered_text(status)
        await submit(pilot, "/mode allow")
        fake_llm.script(Reply(text="built"))
        await submit(pilot, "build it")
        await wait_for(pilot, lambda: len(fake_llm.requests) == 2, what="the second request")
        await idle(pilot)
        assert {"write_file", "bash_exec"} <= requested_tools(fake_llm.requests[1])
        first = app.bridge.session.session_id
        await submit(pilot, "/clear")
        await wait_for(pilot, lambda: app.bridge.session.session_id != first, what="/clear")
        assert app.bridge.session.agent.profile.name == "coder" and app.mode == "allow"


async def test_compact_command(make_app: Any, fake_llm: Any) -> None:
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "/compact")
        await wait_for(pilot, lambda: any("Nothing to compact" in n for n in notices(app)), what="nothing yet")
        for turn in range(6):
            fake_llm.script(Reply(text=f"answer {turn}"))
            await submit(pilot, f"question {turn}")
            await wait_for(pilot, lambda t=turn: len(fake_llm.requests) == t + 1, what="a request")
            await idle(pilot)
        fake_llm.script(Reply(text="## Goal\nanswer questions"))
        await submit(pilot, "/compact")
        await wait_for(pilot, lambda: any(n.startswith("Compacted ") for n in notices(app)), what="/compact")
        assert app.bridge.session.messages[1]["content"].startswith("[Summary of the earlier conversation")


async def test_fallback_and_budget_in_the_app(make_app: Any, fake_llm: Any, isolated_home: Any) -> None:
    from tests.fakellm import call

    config = isolated_home / "config" / "coder-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('max_retries = 0\nmax_tokens = 1000\nfallback_models = ["openai/backup-model"]\n')
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        fake_llm.script(Reply(status=500, error_message="down"),
                        Reply(tool_calls=[call("list_dir", path="")], usage=(5000, 10)))
        await submit(pilot, "look around")
        await wait_for(pilot, lambda: len(fake_llm.requests) == 2, what="the fallback request")
        await idle(pilot)
        shown = notices(app)
        assert any("using openai/backup-model" in n for n in shown)
        assert any("the token budget is spent (5,010 tokens used of 1,000)" in n for n in shown)
        assert "openai/backup-model" in rendered_text(app.query_one("#status"))


async def test_an_unknown_profile_at_start_says_what_failed_and_what_to_do(make_app: Any) -> None:
    app = make_app("--profile", "nope")
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: app.query_one("#status").state == "not ready", what="the failure")
        said = next((n for n in notices(app) if "nope" in n), str(notices(app)))
        assert said.startswith("profile: ") and "no profile 'nope'" in said
        assert "Ctrl+Q" in said and "coder-tui profiles" in said  # what to do
