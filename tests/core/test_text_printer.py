"""`run`'s readable output: a tool call line names what the call is about, never a null."""

from __future__ import annotations

import io

from agent import events as ev
from agent.frontends.printing import TextPrinter


def test_a_tool_call_line_leaves_out_an_argument_given_as_null() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = TextPrinter(out, err)
    printer.on_tool_call(ev.ToolCallEvent(call_id="c1", tool="shell_open", args={"command": None}))
    printer.on_tool_call(ev.ToolCallEvent(call_id="c2", tool="read_file", args={"file_path": "a.py"}))
    assert out.getvalue().splitlines() == ["→ shell_open", "→ read_file a.py"]
