"""A resumed session shows what happened: denied and stopped calls as such (not as "✓"), a
command's exit code, the checkpoints taken and restored, and the mode it was left in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakellm import Reply, call
from tests.tui.conftest import APP_SIZE, ready, rendered_text, wait_for
from tests.tui.test_history import view_lines
from tests.tui.test_app_sessions import approval, deny_with_feedback, idle, patch, submit


async def record_a_session(make_app: Any, fake_llm: Any, workspace: Path) -> None:
    fake_llm.script(Reply(text="Changing it.", tool_calls=[patch("print('hello')", "print('hi')")]),
                    Reply(text="OK, left as it is."),
                    Reply(tool_calls=[patch("def main():", "def main() -> None:")]),
                    Reply(text="Running it.", tool_calls=[call("bash_exec", command="echo ran; echo x > out.txt; exit 2")]),
                    Reply(text="It exits with 2."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await deny_with_feedback(pilot, "first", "no thanks")
        await submit(pilot, "second")
        await approval(pilot)
        await pilot.press("escape")  # stop the run at the approval
        await idle(pilot)
        await submit(pilot, "/mode allow")
        await wait_for(pilot, lambda: app.mode == "allow", what="allow mode")
        await submit(pilot, "third")
        await idle(pilot)
        assert (workspace / "app.py").read_text().count("print('hello')") == 1 and (workspace / "out.txt").exists()
        await submit(pilot, "/undo")
        await wait_for(pilot, lambda: any("Restored checkpoint" in b.text for b in notices(app)), what="the undo ")
        assert not (workspace / "out.txt").exists()
        await app.bridge.shutdown()


def notices(app: Any) -> list[Any]:
    from tui.widgets.history import Block
    from tui.widgets.transcript import Notice

    return [b for b in app.query_one("#history").blocks if b.kind == "notice"] + [
        Block("notice", n.message, n.notice_kind) for n in app.query(Notice)]


async def test_a_resumed_session_shows_denied_stopped_and_failed_calls_restores_and_its_mode(
        make_app: Any, fake_llm: Any, workspace: Path) -> None:
    from tui.widgets.timeline import CheckpointEntry

    await record_a_session(make_app, fake_llm, workspace)
    app = make_app("--resume", "last")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        blocks = app.query_one("#history").blocks
        tools = [(b.who, b.ok, b.note) for b in blocks if b.kind == "tool"]
        assert tools == [("patch_file", False, "denied: no thanks"), ("patch_file", False, "stopped"),
                         ("bash_exec", False, "exit 2")]
        bash = next(b for b in blocks if b.who == "bash_exec")
        assert bash.preview == "ran" and bash.duration is not None and bash.duration < 30
        kinds = [(b.kind, b.text) for b in blocks if b.kind in ("user", "notice")]
        restored = next(i for i, (kind, text) in enumerate(kinds) if text.startswith("Restored checkpoint"))
        assert kinds[restored - 1] == ("user", "third")  # where it happened: after the third request
        assert "before bash_exec" in kinds[restored][1]  # the checkpoint it went back to, by its label
        entries = [e.label for e in app.query(CheckpointEntry)]
        assert any(label.startswith("before restoring") for label in entries), entries
        assert app.mode == "allow" and app.bridge.session.mode == "allow"
        assert rendered_text(app.query_one("#status")).startswith(" ALLOW ")
        assert any("ALLOW mode, as the session left it" in b.text for b in notices(app))


async def test_mode_given_on_the_command_line_wins_over_the_recorded_one(make_app: Any, fake_llm: Any,
                                                                        workspace: Path) -> None:
    fake_llm.script(Reply(text="fine"))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "hello")
        await idle(pilot)
        await app.bridge.shutdown()
    app = make_app("--resume", "last", "--mode", "plan")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        assert app.mode == "plan" and app.bridge.session.mode == "plan"
        assert any("It was in ALLOW mode; --mode keeps PLAN" in b.text for b in notices(app))



async def test_the_welcome_hint_is_not_printed_after_a_resumed_conversation(make_app: Any, fake_llm: Any) -> None:
    fake_llm.script(Reply(text="fine"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        assert any(b.text.startswith("Ask for a change") for b in notices(app))  # a first launch has it
        await submit(pilot, "hello")
        await idle(pilot)
        await app.bridge.shutdown()
    app = make_app("--resume", "last")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        said = [b.text for b in notices(app)]
        assert any(text.startswith("Resumed session") for text in said)
        assert not any(text.startswith("Ask for a change") for text in said), said


async def test_a_recorded_event_of_an_unknown_or_damaged_shape_is_skipped_and_said(
        make_app: Any, fake_llm: Any, workspace: Path) -> None:
    import json

    from agent.events import RunStarted, ToolCallEvent, ToolResultEvent
    from agent.session.record import SessionStore
    from agent.workspaces.local import LocalWorkspace
    label = LocalWorkspace(str(workspace)).label
    writer = SessionStore().create({"workspace": label, "workspace_kind": "local", "root": str(workspace),
                                    "mode": "ask"})
    writer.message({"role": "user", "content": "look"})
    writer.event(RunStarted(prompt="look", model="m", mode="allow", workspace=label, run_id="r1",
                            session_id=writer.session_id))
    writer.message({"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"file_path": "app.py"}'}}]})
    writer.event(ToolCallEvent(call_id="c1", tool="read_file", args={"file_path": "app.py"}))
    writer.message({"role": "tool", "tool_call_id": "c1", "content": "print('hello')"})
    # one from a later version, one damaged (a result whose `ok` is not a yes or no): neither parses
    for raw in ({"type": "telepathy", "call_id": "c1"}, {"type": "tool_result", "call_id": "c1", "ok": {"x": 1}}):
        writer.event(None, dumped=json.dumps(raw))
    writer.event(ToolResultEvent(call_id="c1", tool="read_file", ok=True, output="print('hello')", duration=0.1))
    writer.close()
    app = make_app("--resume", writer.session_id)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        said = [b.text for b in notices(app) if b.text.startswith("Resumed session")]
        assert len(said) == 1 and "2 recorded events of an unknown or damaged shape were skipped" in said[0], said
        assert app.mode == "allow"  # the events that parse are replayed as before
        assert [(b.who, b.ok) for b in app.query_one("#history").blocks if b.kind == "tool"] == [("read_file", True)]


async def test_a_resumed_session_shows_the_diff_of_each_edit_under_its_call(make_app: Any, fake_llm: Any,
                                                                           workspace: Path) -> None:
    # Live, an applied edit shows its diff under the call; resumed, only "✓ write_file new.py" was left.
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="new.py", content="x = 1\n")]),
                    Reply(tool_calls=[patch("print('hello')", "print('hi')")]), Reply(text="Done."))
    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "make them")
        await idle(pilot)
        await app.bridge.shutdown()
    app = make_app("--resume", "last")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        blocks = [b for b in app.query_one("#history").blocks if b.kind in ("tool", "diff")]
        assert [(b.kind, b.who) for b in blocks] == [("tool", "write_file"), ("diff", "new.py"),
                                                     ("tool", "patch_file"), ("diff", "app.py")]
        assert "+x = 1" in blocks[1].text and "-    print('hello')" in blocks[3].text
        await pilot.pause()
        text = "\n".join(view_lines(app.query_one("#history")))
        assert "new.py  +1 -0  new file" in text and "app.py  +1 -1" in text
