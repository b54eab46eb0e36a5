"""Lasting rules in the app: the approval's "always allow" shows the narrowest rule before saving it,
saves it in config.toml and the next identical call runs unasked; `/permissions` lists, adds and
removes rules (against the scripted model server, through the real session)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from agent import paths
from tests.fakellm import Reply, call
from tests.tui.conftest import ready, wait_for
from tests.tui.test_app_sessions import approval, submit
from tests.tui.test_docked_approval import answered, idle, panel_text


def _saved() -> dict[str, Any]:
    return tomllib.loads(paths.user_config_file().read_text()).get("permissions", {})


async def test_always_allow_saves_the_narrowest_rule_and_the_same_command_runs_unasked(
        make_app: Any, workspace: Path, fake_llm: Any) -> None:
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="touch one")]), Reply(text="one"),
                    Reply(tool_calls=[call("bash_exec", command="touch one")]), Reply(text="again"),
                    Reply(tool_calls=[call("bash_exec", command="touch two")]), Reply(text="other"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "first")
        panel = await approval(pilot)
        text = panel_text(panel)
        assert "From now on: bash_exec(touch one) → your config.toml" in text  # shown before it is saved
        assert "config.toml (w: workspace)" in text  # where w saves it instead, not "(w switches)"
        assert "Always allow (r)" in text and "no network" in text  # "allow all" says what it grants
        assert not paths.user_config_file().exists() or not _saved()
        await pilot.press("r")
        await answered(pilot)
        await idle(pilot)
        assert _saved() == {"allow": ["bash_exec(touch one)"]} and (workspace / "one").exists()

        await submit(pilot, "same again")  # the very command: no question
        await idle(pilot)
        assert not app.query("#approval")
        await submit(pilot, "another")  # another command still asks
        await approval(pilot)
        await pilot.press("n", "enter")
        await idle(pilot)
        assert not (workspace / "two").exists()


async def test_always_allow_can_write_the_workspace_file(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="notes/a.md", content="x\n")]), Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "write it")
        panel = await approval(pilot)
        await pilot.press("w")
        await wait_for(pilot, lambda: ".coder-tui.toml (this workspace)" in panel_text(panel), what="the target")
        assert "write_file(./notes/a.md)" in panel_text(panel)
        await pilot.press("r")
        await answered(pilot)
        await idle(pilot)
    saved = tomllib.loads((workspace / ".coder-tui.toml").read_text())
    assert saved == {"permissions": {"allow": ["write_file(./notes/a.md)"]}} and (workspace / "notes/a.md").exists()


async def test_a_line_no_rule_can_see_into_offers_none(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="echo $(cat app.py)")]), Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "go")
        panel = await approval(pilot)
        assert "No lasting rule can allow this call" in panel_text(panel)
        await pilot.press("r")  # nothing to save: the key does nothing
        await pilot.pause()
        assert app.query("#approval") and not paths.user_config_file().exists() or not _saved()
        await pilot.press("n", "enter")
        await idle(pilot)


async def test_the_permissions_command_lists_adds_and_removes(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    from tui.widgets.transcript import Notice

    def said() -> list[str]:
        return [str(n.render()) for n in app.query(Notice)]

    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="npm --version && touch made")]), Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "/permissions allow 'bash_exec(npm --version)'")
        await submit(pilot, "/permissions allow 'bash_exec(touch:*)'")
        await submit(pilot, "/permissions deny 'bash_exec(rm:*)'")
        await submit(pilot, "/permissions allow 'bash_exec(a && b)'")
        await wait_for(pilot, lambda: any("is not saved" in s for s in said()), what="the refusal")
        assert any("one simple command" in s for s in said())
        assert _saved() == {"allow": ["bash_exec(npm --version)", "bash_exec(touch:*)"], "deny": ["bash_exec(rm:*)"]}
        await submit(pilot, "/permissions")
        await wait_for(pilot, lambda: any(s.startswith("deny bash_exec(rm:*)") for s in said()), what="the list")
        await submit(pilot, "/permissions remove 'bash_exec(npm --version)'")
        await wait_for(pilot, lambda: any(s.startswith("Removed bash_exec(npm --version)") for s in said()),
                       what="the removal")
        assert _saved()["allow"] == ["bash_exec(touch:*)"]
        await submit(pilot, "go")  # npm --version is no longer allowed: the compound line asks
        await approval(pilot)
        await pilot.press("n", "enter")
        await idle(pilot)
        assert not (workspace / "made").exists()


async def test_the_offer_leaves_out_what_a_rule_already_allows(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    with paths.user_config_file().open("a") as handle:
        handle.write('\n[permissions]\nallow = ["bash_exec(ls:*)"]\n[[hooks.notification]]\ncommand = "true"\n')
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="ls -a && touch t")]), Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await submit(pilot, "go")
        panel = await approval(pilot)
        assert "From now on: bash_exec(touch t) →" in panel_text(panel)
        await pilot.press("r")
        await answered(pilot)
        await idle(pilot)
    saved = tomllib.loads(paths.user_config_file().read_text())
    assert saved["permissions"] == {"allow": ["bash_exec(ls:*)", "bash_exec(touch t)"]}
    assert list(saved["hooks"]) == ["notification"]  # only what was written is written back


def test_allow_all_says_what_it_grants() -> None:
    from tui.widgets.approvalpanel import allow_all_label

    assert allow_all_label("bash_exec", kind="exec") == "Allow bash_exec for this session, without network (a)"
    assert allow_all_label("web_fetch", kind="network") == "Allow web_fetch for this session, any site (a)"
    assert allow_all_label("web_fetch", 30, kind="network") == "Session, any site (a)"
