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


async def test_a_peers_plan_steps_get_only_what_the_rooms_settings_grant(rig: Any) -> None:  # noqa: F811
    """A plan step runs in its own executor: a room peer's limits (no network by default) must
    follow it there, or a peer's structured request reaches what its plain request may not."""
    from tests.fakellm import call
    from tests.oct.test_oct_peers import internal_service

    hits: list[str] = []
    service = internal_service(hits)
    try:
        r = await rig(mode="allow")
        r.session.workflow = "structured"
        r.llm.script(plan_reply("Fetch the page", goal="Read the internal page"),
                     Reply(tool_calls=[call("web_fetch", url=f"{service.base_url}/secret")]),
                     Reply(text="could not fetch"), Reply(text="done"))
        r.host.send(cmd="chat", text="@agent read our internal page step by step")
        while not (await r.host.expect("chat"))["text"] == "done":
            pass
    finally:
        service.stop()
    results = [e for e in r.events if e.type == "tool_result" and e.tool == "web_fetch"]
    assert not hits and results and not results[0].ok
    assert "allow_network = true" in (results[0].error or "")

