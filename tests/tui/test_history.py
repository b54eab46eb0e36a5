"""Earlier turns: the transcript's history view and the timeline's folded requests stay one widget
each, however long the session; what they show stays usable (tool output, checkpoints)."""

from __future__ import annotations


from textual.app import App, ComposeResult

from tui.theme_vars import derive_app_variables
from tui.widgets.history import Block, HistoryView
from tui.widgets.timeline import KEEP_RUNS, CheckpointEntry, Timeline
from tui.widgets.transcript import Transcript


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.restores: list[str] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return derive_app_variables(self.current_theme)

    def compose(self) -> ComposeResult:
        yield Transcript()
        yield Timeline()

    def on_timeline_restore_requested(self, message: Timeline.RestoreRequested) -> None:
        self.restores.append(message.checkpoint_id)


async def test_a_new_prompt_moves_the_last_turn_into_the_history_view() -> None:
    app = Host()
    async with app.run_test(size=(80, 40)) as pilot:
        transcript = app.query_one(Transcript)
        for turn in range(30):
            transcript.user(f"question {turn}")
            transcript.tool_call(f"c{turn}", "read_file", "app.py")
            transcript.tool_result(f"c{turn}", True, f"output of call {turn}", 0.01)
            transcript.text(f"Answer **{turn}**")
            transcript.diff("app.py", "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-old\n+new\n")
            transcript.end_answer()
        await pilot.pause(0.3)
        live = [w for w in transcript.children if not isinstance(w, HistoryView)]
        assert len(live) == 4  # only the last turn is widgets
        history = transcript.history
        assert [b.kind for b in history.blocks[:5]] == ["user", "tool", "answer", "diff", "user"]
        assert history.blocks[2].text == "Answer **0**"
        text = "\n".join(view_lines(history))
        assert "question 0" in text and "Answer 0" in text and "read_file" in text and "+ new" in text


def view_lines(view: HistoryView) -> list[str]:
    starts = view._line_starts(view.size.width)
    return [view.render_line(y).text.rstrip() for y in range(starts[-1])]


async def test_clicking_an_earlier_tool_call_shows_its_output() -> None:
    app = Host()
    async with app.run_test(size=(80, 40)) as pilot:
        history = app.query_one(HistoryView)
        history.extend([Block("user", "hi", "you"), Block("tool", "line one\nline two", "bash_exec", key="ls", ok=True,
                                                        duration=0.2)])
        await pilot.pause()
        lines = view_lines(history)
        row = next(i for i, line in enumerate(lines) if "bash_exec" in line)
        assert "line one" not in "\n".join(lines)
        await pilot.click(HistoryView, offset=(3, row))
        await pilot.pause()
        assert "line one" in "\n".join(view_lines(history)) and history.blocks[1].expanded


async def test_old_requests_fold_into_one_list_and_their_checkpoints_still_restore() -> None:
    from tui.widgets.earlier import EarlierRuns

    app = Host()
    async with app.run_test(size=(80, 40)) as pilot:
        timeline = app.query_one(Timeline)
        for run in range(KEEP_RUNS + 8):
            timeline.start_run(f"request {run}")
            timeline.checkpoint(f"cp{run:04d}abcdef", f"step 1: before write_file {run}")
            timeline.end_run("✓ done · 1 step")
        await pilot.pause()
        assert len(list(timeline.query(CheckpointEntry))) == KEEP_RUNS
        earlier = timeline.query_one(EarlierRuns)
        assert earlier.option_count == 8 * 2  # a line per request and per checkpoint
        assert "request 0" in str(earlier.get_option_at_index(0).prompt)
        earlier.focus()
        earlier.highlighted = 1
        await pilot.press("enter")  # Enter alone never restores: the restore dialog takes Enter as yes
        await pilot.pause()
        assert app.restores == []
        await pilot.press("r")
        await pilot.pause()
        assert app.restores == ["cp0000abcdef"]
        earlier.highlighted = 3
        await pilot.press("r")
        await pilot.pause()
        assert app.restores[-1] == "cp0001abcdef"
        assert len(timeline.children) <= KEEP_RUNS * 3 + 1  # bounded, not one group per request


async def test_history_follows_the_theme() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        from tui.themes import register_builtin_themes

        register_builtin_themes(app)
        app.theme = "dark"
        history = app.query_one(HistoryView)
        history.extend([Block("diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "x")])
        await pilot.pause()
        dark_bg = removed_background(history)
        assert dark_bg == app.theme_variables["diff-removed-bg"].upper()
        app.theme = "light"
        await pilot.pause()
        assert removed_background(history) == app.theme_variables["diff-removed-bg"].upper() != dark_bg


def removed_background(history: HistoryView) -> str:
    line = next(history.render_line(y) for y in range(6) if "- a" in history.render_line(y).text)
    segment = next(s for s in line if s.text.strip() == "a")
    return segment.style.bgcolor.triplet.hex.upper()


async def test_an_earlier_tool_line_wraps_under_itself_and_a_new_file_says_so() -> None:
    # A resumed (or earlier) turn drew a long tool line's second row at the margin, left of its ✗
    # (the live row wraps under its icon),
    # and a created file's diff lost the "new file" mark the live diff showed.
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        history = app.query_one(HistoryView)
        note = "write_file is blocked in plan mode, which only reads. Describe the change instead"
        history.extend([Block("tool", "", "write_file", key="hello.py", ok=False, note=note, duration=0.0),
                        Block("diff", "--- /dev/null\n+++ b/hello.py\n@@ -0,0 +1 @@\n+print('hello')\n", "hello.py")])
        await pilot.pause()
        lines = [line for line in view_lines(history) if line.strip()]
        first = next(i for i, line in enumerate(lines) if "✗ write_file" in line)
        column = lines[first].index("✗")
        wrapped = lines[first + 1]
        assert "reads." in wrapped and len(wrapped) - len(wrapped.lstrip()) == column, wrapped
        header = next(line for line in lines if "hello.py  +1" in line)
        assert header.rstrip().endswith("new file")


async def test_an_earlier_numbered_list_keeps_its_numbers_periods() -> None:
    # Live, "1. first"; once the turn moved into the history, Rich drew "1 first".
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        history = app.query_one(HistoryView)
        history.extend([Block("answer", "Steps:\n\n1. first\n2. second\n\n- a bullet")])
        await pilot.pause()
        lines = [line.strip() for line in view_lines(history) if line.strip()]
        assert lines[1:] == ["1. first", "2. second", "• a bullet"], lines
