"""A room answers @agent with the plan in the room chat, then a line per step as it runs."""

from __future__ import annotations

from typing import Any

from tests.fakellm import Reply
from tests.oct.test_oct_agent import rig  # noqa: F401  (the room rig: a Node host, our client, a session)
from tests.planning.common import plan_reply


async def test_chat_trigger_gets_the_plan_and_step_lines_in_the_chat(rig: Any) -> None:  # noqa: F811
    r = await rig()
    r.session.workflow = "structured"
    r.llm.script(plan_reply("Look at a", "Explain a", goal="Explain what a is"), Reply(text="a is set to 1."),
                 Reply(text="It is a constant."), Reply(text="a is the constant 1."))
    r.host.send(cmd="chat", text="@agent explain the variable a step by step")
    messages = [(await r.host.expect("chat"))["text"] for _ in range(4)]
    assert messages == ["Plan: Explain what a is\n○ 1. Look at a\n○ 2. Explain a",
                        "✓ 1/2 Look at a: done — a is set to 1.",
                        "✓ 2/2 Explain a: done — It is a constant.",
                        "a is the constant 1."]
    assert [e.type for e in r.events if e.type in ("plan_created", "step_start")] == [
        "plan_created", "step_start", "step_start"]
