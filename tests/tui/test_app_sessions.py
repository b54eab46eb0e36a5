"""Whole sessions in the app against the scripted model server (litellm's real request path)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from tests.fakellm import Reply, call
from tests.tui.conftest import APP_SIZE, ready, rendered_text, type_text, wait_for


async def submit(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def approval(pilot: Any) -> Any:
    """The approval docked under the conversation, once it has the focus."""
    from tui.widgets.approvalpanel import ApprovalPanel

    def docked() -> Any:
        panel = next(iter(pilot.app.query(ApprovalPanel)), None)
        return panel is not None and pilot.app.focused in (panel, *panel.query("DiffView")) and panel

    return await wait_for(pilot, docked, what="the docked approval")


async def idle(pilot: Any) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: not app.bridge.running and app.query_one("#status").state == "idle",
                   what="the run to end")
    await pilot.pause()


def answers(app: Any) -> list[str]:
    """Every answer in the conversation: earlier turns (history blocks), then the latest turn's."""
    from tui.widgets.answer import AssistantMessage

    earlier = [b.text for b in app.query_one("#history").blocks if b.kind == "answer"]
    return earlier + [m.written for m in app.query(AssistantMessage)]


def notices(app: Any) -> list[str]:
    from tui.widgets.transcript import Notice

    earlier = [b.text for b in app.query_one("#history").blocks if b.kind == "notice"]
    return earlier + [str(n.render()) for n in app.query(Notice)]


async def deny_with_feedback(pilot: Any, prompt: str, feedback: str) -> None:
    """Send prompt, deny the approval it brings with feedback, and wait for the run's end."""
    await submit(pilot, prompt)
    await approval(pilot)
    await pilot.press("n")
    await type_text(pilot, feedback)
    await pilot.press("enter")
    await idle(pilot)


async def change_with_checkpoint(pilot: Any) -> Any:
    """Ask for the change the test scripted, in allow mode; its checkpoint once the timeline shows it."""
    from tui.widgets.timeline import CheckpointEntry

    await ready(pilot)
    await submit(pilot, "change it")
    await idle(pilot)
    return await wait_for(pilot, lambda: next(iter(pilot.app.query(CheckpointEntry)), None), what="a checkpoint")


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def patch(old: str, new: str, path: str = "app.py") -> Any:
    return call("patch_file", file_path=path, patches=[{"old_text": old, "new_text": new}])


async def test_prompt_streams_then_diff_then_allow_once_writes_the_file(make_app: Any, workspace: Path,
                                                                         fake_llm: Any) -> None:
    answer = "I changed the **greeting** as asked; " + "it now says hello, world. " * 12
    fake_llm.script(Reply(text="Let me change it.", tool_calls=[patch("print('hello')", "print('hello, world')")]),
                    Reply(text=answer, chunk_size=6, chunk_delay=0.01))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "change the greeting")
        screen = await approval(pilot)
        assert [c.path for c in screen.request.changes] == ["app.py"]
        assert "print('hello')" in (workspace / "app.py").read_text()  # nothing written before approval
        await pilot.press("y")
        # The answer streams: part of it is on screen before the rest arrives.
        await wait_for(pilot, lambda: any(0 < len(a) < len(answer) for a in answers(app)), what="partial text")
        await idle(pilot)
        assert "print('hello, world')" in (workspace / "app.py").read_text()
        assert answers(app)[-1] == answer
        from tui.widgets.answer import AssistantMessage

        assert app.query(AssistantMessage).last().source == answer  # the Markdown got every chunk
        assert "Edited app.py" in tool_messages(fake_llm.requests[-1])[-1]
        status = app.query_one("#status")
        assert status.state == "idle"


async def test_deny_with_feedback_tells_the_model_and_writes_nothing(make_app: Any, workspace: Path,
                                                                      fake_llm: Any) -> None:
    before = (workspace / "app.py").read_text()
    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('hi')")]), Reply(text="Understood."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await deny_with_feedback(pilot, "shorten the greeting", "use logging instead")
        assert (workspace / "app.py").read_text() == before
        told = tool_messages(fake_llm.requests[-1])[-1]
        assert "denied" in told and "use logging instead" in told


async def test_rejecting_one_hunk_applies_only_the_other(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    lines = [f"line {i}\n" for i in range(1, 41)]
    (workspace / "long.txt").write_text("".join(lines))
    changed = list(lines)
    changed[1], changed[34] = "line 2 changed\n", "line 35 changed\n"
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="long.txt", content="".join(changed))]),
                    Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "change two lines")
        await approval(pilot)
        await pilot.press("j", "space", "y")  # move to the second hunk, reject it, allow the rest
        await idle(pilot)
        text = (workspace / "long.txt").read_text()
        assert "line 2 changed" in text and "line 35 changed" not in text and "line 35\n" in text
        assert "rejected hunk(s) 2 of 2" in tool_messages(fake_llm.requests[-1])[-1]


async def test_editing_the_proposal_before_applying_it(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    from textual.widgets import TextArea

    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('hi')")]), Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "change it")
        screen = await approval(pilot)
        await pilot.press("e")
        editor = await wait_for(pilot, lambda: next(iter(screen.query(TextArea)), None), what="the editor")
        assert "print('hi')" in editor.text
        editor.text = editor.text.replace("print('hi')", "print('edited by me')")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("y")
        await idle(pilot)
        assert "print('edited by me')" in (workspace / "app.py").read_text()
        assert "the user edited the proposed content" in tool_messages(fake_llm.requests[-1])[-1]


async def test_allow_all_applies_later_edits_of_that_tool_and_shows_them(make_app: Any, workspace: Path,
                                                                         fake_llm: Any) -> None:
    from tui.widgets.approvalpanel import ApprovalPanel
    from tui.widgets.diffview import DiffView

    fake_llm.script(Reply(tool_calls=[patch("def main():", "def main() -> None:")]),
                    Reply(tool_calls=[patch("print('hello')", "print('hello again')")]),
                    Reply(text="both done"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "two edits")
        await approval(pilot)
        await pilot.press("a")
        await idle(pilot)
        text = (workspace / "app.py").read_text()
        assert "def main() -> None:" in text and "print('hello again')" in text
        assert not app.query(ApprovalPanel)
        live = app.query_one("#livediff")
        assert live.has_class("-open") and list(live.diffs) == ["app.py"]
        assert live.query(DiffView)  # the second edit, applied without asking, is on screen


async def test_escape_stops_the_run_mid_stream(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    long = "word " * 2000
    fake_llm.script(Reply(text=long, chunk_size=5, chunk_delay=0.01))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "talk a lot")
        await wait_for(pilot, lambda: any(answers(app)), what="streaming to start")
        await pilot.press("escape")
        await idle(pilot)
        assert len(answers(app)[-1]) < len(long)
        assert "Stopped." in notices(app)
        assert any("stopped" in str(w.render()) for w in app.query("RunEnd"))


async def test_mode_cycles_and_plan_mode_blocks_edits(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    before = (workspace / "app.py").read_text()
    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('x')")]), Reply(text="I would change it."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        status = app.query_one("#status")
        await pilot.press("shift+tab")
        assert app.mode == "allow" and app.bridge.session.mode == "allow" and " ALLOW " in rendered_text(status)
        await pilot.press("shift+tab")
        assert app.mode == "plan" and rendered_text(status).startswith(" PLAN ")
        assert status.badge().style == status.get_component_rich_style("statusbar--plan")
        await submit(pilot, "change it")
        await idle(pilot)
        assert (workspace / "app.py").read_text() == before
        assert "blocked in plan mode" in tool_messages(fake_llm.requests[-1])[-1]
        await pilot.press("shift+tab")
        assert app.mode == "ask" and rendered_text(status).startswith(" ASK ")


async def test_restoring_a_checkpoint_from_the_timeline(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    from tui.screens.confirm import ConfirmScreen
    from tui.widgets.timeline import CheckpointEntry

    before = (workspace / "app.py").read_text()
    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('changed')")]), Reply(text="done"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        entry = await change_with_checkpoint(pilot)
        assert "changed" in (workspace / "app.py").read_text()
        await pilot.press("ctrl+t")  # focus the timeline's checkpoints
        assert app.focused is entry
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: (workspace / "app.py").read_text() == before, what="the restore")
        await wait_for(pilot, lambda: len(app.query(CheckpointEntry)) == 2, what="the restore point")


async def test_declining_the_restore_confirmation_changes_nothing(make_app: Any, workspace: Path,
                                                                  fake_llm: Any) -> None:
    from tui.screens.confirm import ConfirmScreen

    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('changed')")]), Reply(text="done"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        entry = await change_with_checkpoint(pilot)
        await pilot.click(entry)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("n")
        # a restore, had "n" started one, runs as a worker once the dialog is gone: let all of it finish
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="the dialog to close")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "changed" in (workspace / "app.py").read_text()
        assert not any(n.startswith("Restored checkpoint") for n in notices(app))


async def test_at_mention_completes_and_sends_the_file(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    fake_llm.script(Reply(text="It prints hello."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        prompt = app.query_one("#prompt")
        await wait_for(pilot, lambda: "app.py" in prompt.files, what="the file list")
        await type_text(pilot, "explain @ap")
        await pilot.press("tab")
        assert "@app.py" in prompt.value
        await pilot.press("enter")
        await idle(pilot)
        sent = fake_llm.requests[-1]["messages"][-1]["content"]
        assert sent.startswith("explain @app.py")
        assert '<file path="app.py">' in sent and "print('hello')" in sent


async def test_resume_shows_the_earlier_conversation(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    fake_llm.script(Reply(text="First answer."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "first question")
        await idle(pilot)
        first_id = app.bridge.session.session_id
        await app.bridge.shutdown()
    fake_llm.script(Reply(text="Second answer."))
    app = make_app("--resume", "last")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        assert app.bridge.session.session_id == first_id
        assert answers(app) == ["First answer."]
        await submit(pilot, "second question")
        await idle(pilot)
        history = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"]
        assert history == ["first question", "second question"]


async def test_session_file_never_holds_the_api_key(make_app: Any, workspace: Path, fake_llm: Any,
                                                   isolated_home: Path) -> None:
    from tests.conftest import TEST_KEY

    fake_llm.script(Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "hello")
        await idle(pilot)
    files = list((isolated_home / "data").rglob("*.jsonl"))  # sessions and the prompt history
    assert files and all(TEST_KEY not in f.read_text() for f in files)
    sessions = list((isolated_home / "data").rglob("sessions/*.jsonl"))
    assert [json.loads(f.read_text().splitlines()[0])["kind"] for f in sessions] == ["meta"]


def todos(*states: str) -> Any:
    steps = ["Read app.py", "Change the greeting", "Run it"]
    return call("todo_write", todos=[{"id": str(i + 1), "content": s, "status": st}
                                     for i, (s, st) in enumerate(zip(steps, states, strict=True))])


async def test_plan_steps_show_their_states_and_the_active_step_holds_its_traces(make_app: Any, fake_llm: Any,
                                                                                   workspace: Path) -> None:
    from tui.widgets.timeline import PlanItem, RunEnd, RunEntry

    planned, traced = threading.Event(), threading.Event()  # the model waits while the test looks
    fake_llm.script(Reply(tool_calls=[todos("in_progress", "pending", "pending")]),
                    Reply(tool_calls=[call("read_file", file_path="app.py")], hold=planned),
                    Reply(tool_calls=[todos("completed", "in_progress", "cancelled")], hold=traced),
                    Reply(text="Planned and read."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "plan it")
        items = await wait_for(pilot, lambda: list(app.query(PlanItem)), what="the plan")
        assert [(i.step, i.status) for i in items] == [("Read app.py", "in_progress"),
                                                        ("Change the greeting", "pending"), ("Run it", "pending")]
        planned.set()
        await wait_for(pilot, lambda: any(t.tool == "read_file" for t in items[0].traces), what="a trace")
        assert "read_file app.py" in rendered_text(items[0])  # the trace sits inside the active step
        traced.set()
        await idle(pilot)
        assert [(i.step, i.status) for i in app.query(PlanItem)] == [
            ("Read app.py", "completed"), ("Change the greeting", "in_progress"), ("Run it", "cancelled")]
        shown = [rendered_text(i).splitlines()[0] for i in app.query(PlanItem)]
        assert shown[0].startswith("✓") and shown[2].startswith("✗")
        assert "plan it" in rendered_text(app.query_one(RunEntry))
        assert "done" in rendered_text(app.query_one(RunEnd))


async def test_fast_tools_in_a_row_each_show_their_result(make_app: Any, workspace: Path, fake_llm: Any) -> None:
    """read_file answers within the frame its call is drawn in: each row still turns from the
    spinner to ✓ (the first one kept its spinner frame for good)."""
    from textual.widgets import Static

    from tui.widgets.transcript import ToolRow

    fake_llm.script(Reply(tool_calls=[call("read_file", file_path="app.py")]),
                    Reply(tool_calls=[call("read_file", file_path="README.md")]), Reply(text="done"))
    async with make_app(animate=True).run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "read both")
        await idle(pilot)
        lines = [str(row.query_one(".tool-line", Static).content) for row in pilot.app.query(ToolRow)]
        assert len(lines) == 2 and all(line.startswith("✓ read_file") for line in lines), lines


async def test_undo_takes_the_edits_it_reverted_off_the_applied_without_asking_strip(
        make_app: Any, workspace: Path, fake_llm: Any) -> None:
    # After /undo the strip still said "Applied without asking (1 file)" with the diff of an edit
    # that was no longer in the file.
    fake_llm.script(Reply(tool_calls=[patch("print('hello')", "print('hi')")]), Reply(text="done"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "edit it")
        await idle(pilot)
        live = app.query_one("#livediff")
        assert live.has_class("-open") and list(live.diffs) == ["app.py"]
        await submit(pilot, "/undo")
        await wait_for(pilot, lambda: "print('hello')" in (workspace / "app.py").read_text(), what="the undo")
        await wait_for(pilot, lambda: not live.diffs and not live.has_class("-open"), what="the strip to clear")


async def test_esc_puts_a_prompt_queued_behind_the_run_back_in_the_input(make_app: Any, fake_llm: Any) -> None:
    """A stop drops the prompts queued behind the run: their text goes back into the input (it was lost)."""
    from tui.widgets.prompt import PromptInput

    release = threading.Event()
    fake_llm.script(Reply(text="never finished", hold=release))
    app = make_app()
    try:
        async with app.run_test(size=APP_SIZE) as pilot:
            await ready(pilot)
            await submit(pilot, "a long task")
            await wait_for(pilot, lambda: len(fake_llm.requests) == 1, what="the held request")
            await submit(pilot, "then this")
            assert app.bridge.waiting == [("then this", [])]
            await pilot.press("escape")
            prompt = app.query_one("#prompt", PromptInput)
            await wait_for(pilot, lambda: prompt.value == "then this", what="the queued prompt back in the input")
            assert app.bridge.waiting == []
            assert any("back in the input" in n for n in notices(app))
    finally:
        release.set()
