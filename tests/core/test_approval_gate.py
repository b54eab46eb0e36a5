"""The approval gate through the real loop: allowances can be revoked, and a tool's duration is
its own run time, not the time the user took to decide."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.approval import ApprovalRequest, Decision
from tests.fakellm import Reply, call

FILES = {"f.txt": "one\ntwo\n"}
THINKING = 1.5  # seconds the user takes to decide


class SlowApprover:
    """Answers after the user thought about it for THINKING seconds (the time the durations leave out)."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision

    async def decide(self, request: ApprovalRequest) -> Decision:
        await asyncio.sleep(THINKING)
        return self.decision


async def test_revoking_an_allowance_makes_the_gate_ask_again(make_harness: Any) -> None:
    h = make_harness(mode="ask", files=FILES, decisions=[Decision("allow_all"), Decision("deny")])
    h.script(Reply(tool_calls=[call("insert_at_line", file_path="f.txt", line=1, content="a")]), Reply(text="one"),
             Reply(tool_calls=[call("insert_at_line", file_path="f.txt", line=1, content="b")]), Reply(text="two"))
    await h.run()
    gate = h.session.gate
    assert gate.allowed_tools == {"insert_at_line"} and not gate.needs_approval("insert_at_line")
    assert gate.revoke("write_file") == [] and gate.allowed_tools == {"insert_at_line"}
    assert gate.revoke("insert_at_line") == ["insert_at_line"]
    assert gate.needs_approval("insert_at_line")
    await h.run()
    assert [e.tool for e in h.of("approval_required")] == ["insert_at_line", "insert_at_line"]
    assert h.read("f.txt").startswith("a\none")  # the second insert was asked for, and denied


async def test_revoke_all(make_harness: Any) -> None:
    h = make_harness(mode="ask", files=FILES)
    h.session.gate.allowed_tools.update({"write_file", "bash_exec"})
    assert h.session.gate.revoke() == ["bash_exec", "write_file"]
    assert h.session.gate.allowed_tools == set()


async def test_a_tool_duration_leaves_out_the_wait_for_the_user(make_harness: Any) -> None:
    h = make_harness(mode="ask", files=FILES, approver=SlowApprover(Decision("allow_once")))
    h.script(Reply(tool_calls=[call("write_file", file_path="w.txt", content="w\n")]), Reply(text="done"))
    await h.run()
    (result,) = h.of("tool_result")
    assert result.ok and h.read("w.txt") == "w\n"
    assert result.duration < THINKING / 2, result.duration


async def test_a_denied_call_duration_leaves_out_the_wait_too(make_harness: Any) -> None:
    h = make_harness(mode="ask", files=FILES, approver=SlowApprover(Decision("deny", feedback="no")))
    h.script(Reply(tool_calls=[call("write_file", file_path="w.txt", content="w\n")]), Reply(text="done"))
    await h.run()
    (result,) = h.of("tool_result")
    assert not result.ok and result.duration < THINKING / 2, result.duration
