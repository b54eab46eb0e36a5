"""Many agents in the app: each subagent a folded row on the timeline (expands to its task, tools
and report), and `/goal CMD` working in rounds with the rounds and the last check in the status bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakellm import FakeLLM, Reply, call
from tests.subagents.common import ByAsker
from tests.tui.conftest import APP_SIZE, ready, rendered_text, wait_for
from tests.tui.test_app_sessions import submit


async def test_each_child_is_a_row_on_the_timeline_that_expands(make_app: Any, fake_llm: FakeLLM) -> None:
    from tui.widgets.children import ChildEntry

    fake_llm.responder = ByAsker({
        "parent": [Reply(tool_calls=[call("agent", task="alpha list the folder"),
                                     call("agent", task="beta list the folder")]), Reply(text="both reported")],
        "alpha": [Reply(tool_calls=[call("list_dir")]), Reply(text="alpha saw the files")],
        "beta": [Reply(text="beta saw nothing")],
    })
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        status = (await ready(pilot)).query_one("#status")
        await submit(pilot, "split it")
        await wait_for(pilot, lambda: status.state == "idle" and fake_llm.responder.asked.get("parent") == 2,
                       timeout=60, what="the children to finish")
        assert not [n.message for n in app.query("Notice") if "could not show" in n.message]
        rows = {row.child_task.split()[0]: row for row in app.query(ChildEntry)}
        assert rows["alpha"].status == "done" and rows["alpha"].tools == ["list_dir"]
        folded = rendered_text(rows["alpha"])
        assert "▸ ✓ coder · alpha list the folder:" in folded and "done · " in folded and "report" not in folded
        rows["alpha"].focus()
        await pilot.press("enter")
        shown = rendered_text(rows["alpha"])
        assert "task: alpha list the folder" in shown and "· list_dir" in shown and "alpha saw the files" in shown
        await submit(pilot, "/live")
        app.query_one("#prompt").focus()
        from tui.livecmd import live_command
        await live_command(app, "")
        await wait_for(pilot, lambda: any(n.message.startswith("Live sessions:") for n in app.query("Notice")),
                       what="the live view")
        live = next(n.message for n in app.query("Notice") if n.message.startswith("Live sessions:")).splitlines()
        assert app.bridge.session.session_id in live[1] and "idle" in live[1]
        assert sorted(text.split(": ", 1)[1][:22] for text in live[2:4]) == ["alpha list the folder ", "beta list the folder  "]
        assert all(text.startswith("  └ ✓ ") and " done " in text for text in live[2:4])


async def test_goal_works_in_rounds_until_the_check_passes(make_app: Any, fake_llm: FakeLLM, workspace: Path) -> None:
    fake_llm.script(Reply(text="looked"), Reply(tool_calls=[call("write_file", file_path="ok.txt", content="ok\n")]),
                    Reply(text="made ok.txt"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        status = (await ready(pilot)).query_one("#status")
        await submit(pilot, "/goal --rounds 4 test -f ok.txt")
        await wait_for(pilot, lambda: status.goal == "goal 2/4 ✓" and status.state == "idle", timeout=60,
                       what="the goal to be met")
        assert "goal 2/4 ✓" in rendered_text(status)
        assert (workspace / "ok.txt").read_text() == "ok\n"
        notes = [n.message for n in app.query("Notice") if "Goal round" in n.message]
        assert notes == ["Goal round 1/4: `test -f ok.txt` failed (exit 1)", "Goal round 2/4: `test -f ok.txt` passed"]
