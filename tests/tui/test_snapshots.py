"""How each pane looks (pytest-textual-snapshot, fixed sizes). Update with `--snapshot-update`.

States are reached through the real app: its boot, its presenter fed with agent events, its
docked approval. Events are given fixed contents and durations, and the workspace sits at
`~/project` under a temporary home, so every run draws the same picture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from tests.tui.conftest import app_options, rendered_text, wait_for

WIDE, NARROW = (120, 36), (80, 24)
CODE = "def main():\n    print('hello')\n\n\nif __name__ == '__main__':\n    main()\n"
ANSWER = ("I changed the greeting in **app.py** and kept the entry point:\n\n"
          "```python\ndef main():\n    print('hello, world')\n```\n\nRun it with `python app.py`.")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                     ("XDG_CACHE_HOME", ".cache")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(CODE)
    (project / "README.md").write_text("# project\n")
    return tmp_path


def make(home: Path, *extra: str, model: bool = True) -> Any:
    from tui.app import CoderApp

    flags = ["--model", "openai/snapshot-model", "--api-base", "http://127.0.0.1:9/v1",
             "--api-key", "sk-snapshot-0000000000"] if model else []
    return CoderApp(app_options(home / "project", None, *flags, *extra), animate=False)


async def settle(pilot: Any) -> None:
    """The session is ready and nothing is still arriving."""
    app = pilot.app
    await wait_for(pilot, lambda: app.bridge.ready and app.query_one("#status").state == "idle", timeout=90,
                   what="ready")  # idle includes the model library's load
    await wait_for(pilot, lambda: "not a git repository" in rendered_text(app.query_one("#pane")),
                   what="the folder pane")
    app.query_one("#prompt").cursor_blink = False
    await pilot.pause(0.1)


def events_of_a_request(streaming: bool) -> list[Any]:
    from agent.events import (PlanUpdated, RunStarted, StepStarted, TextDelta, TodoItem, ToolCallEvent,
                              ToolResultEvent, Usage)

    plan = [TodoItem(id="1", content="Read app.py", status="completed"),
            TodoItem(id="2", content="Change the greeting", status="in_progress"),
            TodoItem(id="3", content="Run it", status="pending")]
    events = [RunStarted(run_id="r1", session_id="s1", mode="ask", model="openai/snapshot-model",
                         workspace="~/project", prompt="make the greeting friendlier"),
              StepStarted(iteration=1), PlanUpdated(todos=plan),
              ToolCallEvent(call_id="c1", tool="read_file", args={"file_path": "app.py"}),
              ToolResultEvent(call_id="c1", tool="read_file", ok=True, output=CODE, duration=0.01),
              ToolCallEvent(call_id="c2", tool="search_code", args={"pattern": "hello"}),
              ToolResultEvent(call_id="c2", tool="search_code", ok=True, output="app.py:2:    print('hello')",
                              duration=0.02),
              Usage(prompt_tokens=1840, completion_tokens=96, cost=0.0071, total_prompt_tokens=1840,
                    total_completion_tokens=96, total_cost=0.0071),
              StepStarted(iteration=2)]
    text = ANSWER[: len(ANSWER) // 2] if streaming else ANSWER
    return events + [TextDelta(text=text)]


async def feed(pilot: Any, events: list[Any], user: str = "make the greeting friendlier") -> None:
    app = pilot.app
    app.show_prompt(user, [])
    for event in events:
        app.presenter.handle(event)
    await pilot.pause(0.3)  # the transcript's flush timer appends the text


def finished(events: list[Any]) -> list[Any]:
    from agent.events import Complete, FileChanged

    diff = ("--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    print('hello')\n"
            "+    print('hello, world')\n")
    return [*events[:-1], FileChanged(path="app.py", diff=diff, line_start=2, line_end=2, reason="patch_file"),
            events[-1], Complete(success=True, iterations=2, final_response=ANSWER, completion_reason="answered")]


def test_idle(snap_compare: Any, home: Path) -> None:
    assert snap_compare(make(home), terminal_size=WIDE, run_before=settle)


def test_streaming(snap_compare: Any, home: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await feed(pilot, events_of_a_request(streaming=True))

    assert snap_compare(make(home), terminal_size=WIDE, run_before=run_before)


def approval_request() -> Any:
    from agent.approval import ApprovalRequest
    from agent.diffing import FileChange

    new = CODE.replace("print('hello')", "print('hello, world')").replace("def main():", "def main() -> None:")
    return ApprovalRequest(approval_id="ap_1", call_id="c3", tool="write_file",
                           args={"file_path": "app.py", "content": new}, kind="edit",
                           summary="write_file app.py", changes=[FileChange("app.py", CODE, new)])


def shell_request() -> Any:
    from agent.approval import ApprovalRequest

    return ApprovalRequest(approval_id="ap_2", call_id="c3", tool="bash_exec",
                           args={"command": "python app.py", "timeout": 60}, kind="exec",
                           summary="python app.py", command="python app.py", cwd="~/project", timeout=60)


@pytest.mark.parametrize("case", ["unified", "full-screen-split", "narrow-shell"])
def test_approval(snap_compare: Any, home: Path, case: str) -> None:
    """Docked under the conversation: the model's reason stays in view above the decision."""

    async def run_before(pilot: Any) -> None:
        from agent.events import TextDelta
        from tui.widgets.approvaldock import dock

        await settle(pilot)
        reason = ("Let me run it to check the new greeting." if case == "narrow-shell" else
                  "The entry point needs a return type, and the greeting should say hello to the world.")
        await feed(pilot, [*events_of_a_request(streaming=True)[:-1], TextDelta(text=reason)])
        request = shell_request() if case == "narrow-shell" else approval_request()
        pilot.app.run_worker(dock(pilot.app, request))
        await wait_for(pilot, lambda: pilot.app.query("#approval"), what="the docked approval")
        await pilot.pause(0.3)
        if case == "full-screen-split":  # too narrow beside the side panel: s goes full screen first
            await pilot.press("s")
            await wait_for(pilot, lambda: pilot.app.query_one("#approval-diff").is_split, what="split view")
            await pilot.pause(0.2)

    size = NARROW if case == "narrow-shell" else (160, 40)
    assert snap_compare(make(home), terminal_size=size, run_before=run_before)


def test_plan_with_steps(snap_compare: Any, home: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await feed(pilot, finished(events_of_a_request(streaming=False)))
        pilot.app.query_one("#timeline").checkpoint("3f2a1c9d0b", "step 2: before patch_file app.py",
                                                   created=None)
        await pilot.pause(0.2)

    assert snap_compare(make(home), terminal_size=WIDE, run_before=run_before)


def test_onboarding(snap_compare: Any, home: Path) -> None:
    async def run_before(pilot: Any) -> None:
        from tui.screens.setup import SetupScreen

        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SetupScreen)
                       and pilot.app.screen.query("#setup-model"), what="setup")
        for field in pilot.app.screen.query(Input):  # a blinking cursor is drawn or not by the clock
            field.cursor_blink = False
        await pilot.pause(0.2)

    assert snap_compare(make(home, model=False), terminal_size=(100, 32), run_before=run_before)


@pytest.mark.parametrize("side_open", [False, True], ids=["chat", "side-panel"])
def test_narrow(snap_compare: Any, home: Path, side_open: bool) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await feed(pilot, finished(events_of_a_request(streaming=False)))
        if side_open:
            await pilot.press("ctrl+b")
            await pilot.pause(0.1)

    assert snap_compare(make(home), terminal_size=NARROW, run_before=run_before)


@pytest.mark.parametrize("theme", ["dark", "light", "high-contrast"])
def test_theme(snap_compare: Any, home: Path, theme: str) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await feed(pilot, finished(events_of_a_request(streaming=False)))

    assert snap_compare(make(home, "--theme", theme), terminal_size=WIDE, run_before=run_before)


def test_earlier_turns(snap_compare: Any, home: Path) -> None:
    """The first turn, archived into the history view, above the live second turn."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await feed(pilot, finished(events_of_a_request(streaming=False)))
        await feed(pilot, events_of_a_request(streaming=True)[:1], user="now run it")
        pilot.app.query_one("#transcript").scroll_end(animate=False)
        await pilot.pause(0.2)

    assert snap_compare(make(home), terminal_size=(120, 48), run_before=run_before)


def structured_events() -> list[Any]:
    """A structured run (agent/planning): the plan, step 1 done, step 2 running with its traces."""
    from agent.events import (AgentAction, PlanCreated, PlanInfo, PlanStepInfo, RunStarted, StepComplete,
                              StepStart, ToolCallEvent, ToolResultEvent)

    steps = [PlanStepInfo(id="1", title="Read app.py", description="Find where the greeting is printed."),
             PlanStepInfo(id="2", title="Change the greeting", description="Print 'hello, world' in main()."),
             PlanStepInfo(id="3", title="Final report", description="Summarise the change.")]
    return [RunStarted(run_id="r1", session_id="s1", mode="allow", model="openai/snapshot-model",
                       workspace="~/project", prompt="make the greeting friendlier, step by step"),
            PlanCreated(plan=PlanInfo(refined_goal="app.py greets the whole world", steps=steps)),
            StepStart(step_id="1", title="Read app.py"),
            StepComplete(step_id="1", status="done", summary="The greeting is printed on line 2 of app.py."),
            StepStart(step_id="2", title="Change the greeting"),
            ToolCallEvent(call_id="c1", tool="read_file", args={"file_path": "app.py"}),
            AgentAction(step_id="2", tool="read_file", status="running"),
            ToolResultEvent(call_id="c1", tool="read_file", ok=True, output=CODE, duration=0.01),
            AgentAction(step_id="2", tool="read_file", status="success"),
            ToolCallEvent(call_id="c2", tool="patch_file", args={"file_path": "app.py"}),
            AgentAction(step_id="2", tool="patch_file", status="running")]


def test_structured_plan_on_the_timeline(snap_compare: Any, home: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await feed(pilot, structured_events(), user="make the greeting friendlier, step by step")
        done = pilot.app.query_one("#timeline").steps.steps["1"]
        await pilot.click(done)  # a step expands to its description and summary
        await wait_for(pilot, lambda: done.expanded, what="the expanded step")
        await pilot.pause(0.2)

    assert snap_compare(make(home), terminal_size=WIDE, run_before=run_before)


def test_plan_review_screen(snap_compare: Any, home: Path) -> None:
    async def run_before(pilot: Any) -> None:
        from agent.planning.models import Plan, PlanDraft, StepDraft
        from tui.screens.planreview import PlanReviewScreen

        await settle(pilot)
        draft = PlanDraft(refined_goal="app.py greets the whole world", steps=[
            StepDraft(title="Read app.py", description="find the greeting"),
            StepDraft(title="Change the greeting", description="print 'hello, world'"),
            StepDraft(title="Final report")])
        pilot.app.push_screen(PlanReviewScreen(Plan.from_draft(draft)))
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PlanReviewScreen), what="the review")
        await pilot.pause(0.2)

    assert snap_compare(make(home), terminal_size=WIDE, run_before=run_before)
