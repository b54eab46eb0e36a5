"""Reasoning in the app: `--reasoning high` against the strict Anthropic server completes a
three-tool-call task, each reply's reasoning shown dimmed above it and folded once the answer (or
a call) starts; `/reasoning` changes the level shown in the status bar; a resumed session shows
the reasoning again, folded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.core.test_reasoning import three_reads
from tests.core.test_reasoning_frontends import PROMPT, accepted_with_blocks
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import Reply
from tests.tui.conftest import APP_SIZE, ready, rendered_text, wait_for
from tests.tui.test_app_sessions import submit


def write_abc(workspace: Path) -> None:
    for name, text in (("a.txt", "1\n"), ("b.txt", "2\n"), ("c.txt", "3\n")):
        (workspace / name).write_text(text)


async def test_a_three_tool_task_shows_each_reasoning_folded_above_its_answer(make_app: Any, workspace: Path) -> None:
    from tui.widgets.reasoning import ReasoningBlock

    write_abc(workspace)
    with FakeAnthropic(*three_reads()) as anthropic:
        app = make_app("--reasoning", "high", "--mode", "allow", fake=anthropic)
        async with app.run_test(size=APP_SIZE) as pilot:
            status = (await ready(pilot)).query_one("#status")
            assert "reasoning high" in rendered_text(status)
            await submit(pilot, PROMPT)
            await wait_for(pilot, lambda: anthropic.remaining == 0 and status.state == "idle", timeout=90,
                           what="the task to finish")
            blocks = list(app.query(ReasoningBlock))
            assert [b.text.split(":")[0] for b in blocks] == ["Step 1", "Step 2", "Step 3", "All three read; time to answer."]
            assert all(b.has_class("-folded") for b in blocks)  # folded once their answer or call started
            assert "▸ thought (1 line)" in rendered_text(blocks[0].query_one(".reasoning-line"))
            blocks[0].focus()
            await pilot.press("enter")
            assert not blocks[0].has_class("-folded")
            assert "reasoning)" in rendered_text(status)  # reasoning tokens with the usage
    accepted_with_blocks(anthropic)


async def test_the_reasoning_command_changes_the_level_and_the_status_bar(make_app: Any) -> None:
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        status = (await ready(pilot)).query_one("#status")
        assert status.reasoning == "" and "reasoning " not in rendered_text(status).split("ws", 1)[-1]
        await submit(pilot, "/reasoning medium")
        await wait_for(pilot, lambda: "reasoning medium" in rendered_text(status), what="the level shown")
        assert app.bridge.session.reasoning == "medium"
        await submit(pilot, "/reasoning max")
        await wait_for(pilot, lambda: any("reasoning is one of off, low, medium, high (got 'max')" in n.message
                                          for n in app.query("Notice")), what="the refusal")
        assert app.bridge.session.reasoning == "medium"
        await submit(pilot, "/reasoning off")
        await wait_for(pilot, lambda: "reasoning medium" not in rendered_text(status), what="the level gone")
        assert status.reasoning == ""
        assert app.bridge.session.reasoning == "off"


async def test_a_resumed_session_shows_its_reasoning_folded(make_app: Any, workspace: Path) -> None:
    write_abc(workspace)
    with FakeAnthropic(*three_reads()) as anthropic:
        app = make_app("--reasoning", "high", "--mode", "allow", fake=anthropic)
        async with app.run_test(size=APP_SIZE) as pilot:
            await ready(pilot)
            await submit(pilot, PROMPT)
            await wait_for(pilot, lambda: anthropic.remaining == 0 and app.query_one("#status").state == "idle",
                           timeout=90, what="the task to finish")
            await app.bridge.shutdown()
        app = make_app("--resume", "last", "--reasoning", "high", fake=anthropic)
        async with app.run_test(size=APP_SIZE) as pilot:
            await ready(pilot)
            shown = [b for b in app.query_one("#history").blocks if b.kind == "reasoning"]
            assert [b.text.split(":")[0] for b in shown] == ["Step 1", "[redacted thinking]\n\nStep 2", "Step 3",
                                                             "All three read; time to answer."]
            assert not any(b.expanded for b in shown)


async def test_the_last_reasoning_stops_thinking_when_the_turn_ends(make_app: Any, fake_llm: Any) -> None:
    """Stopped while the model reasons (no answer follows): the block says it thought, folded."""
    from tui.widgets.reasoning import ReasoningBlock

    fake_llm.script(Reply(reasoning="Let me weigh the options one by one first.", chunk_size=4, stall_after=4))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        status = (await ready(pilot)).query_one("#status")
        await submit(pilot, "think hard")
        block = await wait_for(pilot, lambda: next(iter(app.query(ReasoningBlock)), None), timeout=60,
                               what="the reasoning")
        await pilot.press("escape")
        await wait_for(pilot, lambda: status.state == "idle", timeout=60, what="the stop")
        line = rendered_text(block.query_one(".reasoning-line"))
        assert "thinking" not in line and "▸ thought" in line and block.has_class("-folded")


async def test_reasoning_turned_on_after_a_stopped_tool_loop_says_when_it_starts(make_app: Any, workspace: Path) -> None:
    """The step limit leaves a Claude tool loop open without thinking: `/reasoning high` says (once) the
    level starts when that loop ends, and the prompt that continues it is accepted (without thinking)."""
    from agent import paths
    from agent.llm.reasoning import held_note
    from tests.fakellm import call

    write_abc(workspace)
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text("max_steps = 2\n")
    with FakeAnthropic(Reply(tool_calls=[call("read_file", file_path="a.txt")]),
                       Reply(tool_calls=[call("read_file", file_path="b.txt")]),
                       Reply(text="a and b hold 1 and 2.")) as anthropic:
        app = make_app("--mode", "allow", fake=anthropic)
        async with app.run_test(size=APP_SIZE) as pilot:
            status = (await ready(pilot)).query_one("#status")
            await submit(pilot, "read a and b")
            await wait_for(pilot, lambda: anthropic.remaining == 1 and status.state == "idle", timeout=90,
                           what="the step limit")
            await submit(pilot, "/reasoning high")
            note = held_note(anthropic.model, "high")
            await wait_for(pilot, lambda: any(n.message == note for n in app.query("Notice")), what="the notice")
            await submit(pilot, "go on")
            await wait_for(pilot, lambda: anthropic.remaining == 0 and status.state == "idle", timeout=90,
                           what="the loop to end")
            again = [n for n in app.query("Notice") if n.message == note]  # the turn that went on
    assert again == []  # said when the level changed, not again when the loop went on
    assert anthropic.rejected == []
    assert "thinking" not in anthropic.requests[-1]
