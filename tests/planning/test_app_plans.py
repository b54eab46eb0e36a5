"""The structured workflow in the app: the review screen's edit changes what runs, the timeline
follows the steps, a message during the plan is routed, an unfinished plan is offered on resume."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from tests.fakellm import Reply
from tests.planning.common import plan_reply, user_text
from tests.tui.conftest import rendered_text, type_text, wait_for
from tests.tui.test_app_sessions import idle, notices, submit

SIZE = (120, 40)


async def review_screen(pilot: Any) -> Any:
    from tui.screens.planreview import PlanReviewScreen

    return await wait_for(pilot, lambda: isinstance(pilot.app.screen, PlanReviewScreen) and pilot.app.screen.focused
                          and pilot.app.screen, what="the plan review")


async def test_editing_the_plan_in_the_review_screen_changes_what_runs(make_app: Any, fake_llm: Any) -> None:
    from textual.widgets import TextArea

    fake_llm.script(plan_reply("Old first", "Old second", "Old third", goal="Three things"),
                    Reply(text="third done"), Reply(text="new done"), Reply(text="Report: all done."))
    app = make_app("--workflow", "structured")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.ready, what="the session")
        await submit(pilot, "do three things")
        screen = await review_screen(pilot)
        area = screen.query_one(TextArea)
        assert area.text.splitlines()[0] == "Old first — do old first"
        area.focus()
        area.select_all()  # then type over it: the third step first, a new one, the rest deleted
        await type_text(pilot, "Old third moved up - first now")
        await pilot.press("enter")
        await type_text(pilot, "A new step")
        await pilot.press("ctrl+r")
        await idle(pilot)
        starts = [user_text(r).split("Your step ")[1].splitlines()[0] for r in fake_llm.requests[1:3]]
        assert starts == ["(1 of 2): Old third moved up", "(2 of 2): A new step"]
        timeline = app.query_one("#timeline")
        shown = [rendered_text(item) for item in timeline.steps.steps.values()]
        assert [line.split("\n")[0].strip() for line in shown] == ["✓ 1. Old third moved up", "✓ 2. A new step"]
        assert "Report: all done." in app.query_one("#transcript").query("AssistantMessage").last().source


async def test_a_question_during_the_plan_is_answered_between_steps(make_app: Any, fake_llm: Any) -> None:
    gate = threading.Event()  # step 1's answer waits until the question was sent
    replies = [plan_reply("Slow", "Fast"), Reply(text="slow done"), Reply(text="It is the slow step."),
               Reply(text="fast done"), Reply(text="Report.")]

    def respond(body: dict[str, Any]) -> Reply:
        reply = replies.pop(0)
        if reply.text == "slow done":
            reply.hold = gate  # held off the server's loop: a wait here would stop the whole server
        return reply

    fake_llm.responder = respond
    app = make_app("--workflow", "structured", "--mode", "allow")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.ready, what="the session")
        await submit(pilot, "two steps please")
        await wait_for(pilot, lambda: len(fake_llm.requests) == 2, what="step 1's request")
        await submit(pilot, "what is running now?")
        await wait_for(pilot, lambda: app.bridge.session.inbox, what="the message routed to the plan")
        gate.set()
        await idle(pilot)
        assert "Question: what is running now?" in user_text(fake_llm.requests[2])
        assert "Your step (2 of 2): Fast" in user_text(fake_llm.requests[3])
        assert not app.bridge.waiting and len(fake_llm.requests) == 5 and not replies


async def test_a_resumed_session_offers_its_unfinished_plan(make_app: Any, fake_llm: Any, workspace: Path) -> None:
    fake_llm.script(plan_reply("One", "Two"))
    app = make_app("--workflow", "structured", "--mode", "plan")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.ready, what="the session")
        await submit(pilot, "plan two steps")
        await idle(pilot)
        session_id = app.bridge.session.session_id
        first = app.bridge.session
    await first.close()  # the app's process would end here, and its session lock with it
    fake_llm.script(Reply(text="one done"), Reply(text="two done"), Reply(text="Finished."))
    again = make_app("--resume", session_id, "--mode", "allow")
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any("unfinished plan" in n for n in notices(again)), what=f"the offer {notices(again)}")
        await submit(pilot, "/plan continue")
        await idle(pilot)
        assert len(fake_llm.requests) == 4 and "Your step (1 of 2): One" in user_text(fake_llm.requests[1])
        assert again.bridge.session.unfinished_plan is None


async def test_the_review_screen_takes_typed_feedback_and_enter_never_runs_the_plan(make_app: Any,
                                                                                    fake_llm: Any) -> None:
    """Issue 26 item 2: keys typed as the review opens are the feedback; Enter sends them, and an
    Enter with nothing typed runs nothing (Ctrl+R runs the plan)."""
    fake_llm.script(plan_reply("First", "Second", goal="Two things"), plan_reply("Tests first", "Then code"))
    app = make_app("--workflow", "structured")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.ready, what="the session")
        await submit(pilot, "do two things")
        await review_screen(pilot)
        await pilot.press("enter")  # nothing typed yet: stays open, runs nothing
        await type_text(pilot, "write the tests first")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(fake_llm.requests) == 2, what="the new plan's request")
        assert "write the tests first" in json.dumps(fake_llm.requests[1]["messages"])
        screen = await review_screen(pilot)
        assert "Tests first" in screen.original
        await pilot.press("escape")
        await idle(pilot)
        assert len(fake_llm.requests) == 2  # no step ever ran
