"""`run`'s readable output: a tool call line names what the call is about, never a null."""

from __future__ import annotations

import io
from pathlib import Path

from agent import events as ev
from agent.frontends.printing import TextPrinter
from tests.conftest import TEST_KEY, run_cli
from tests.fakellm import FakeLLM, Reply, call


def test_a_tool_call_line_leaves_out_an_argument_given_as_null() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = TextPrinter(out, err)
    printer.on_tool_call(ev.ToolCallEvent(call_id="c1", tool="shell_open", args={"command": None}))
    printer.on_tool_call(ev.ToolCallEvent(call_id="c2", tool="read_file", args={"file_path": "a.py"}))
    assert out.getvalue().splitlines() == ["→ shell_open", "→ read_file a.py"]


def test_a_shell_opened_without_a_command_prints_no_none(isolated_home: Path, fake_llm: FakeLLM,
                                                        tmp_path: Path) -> None:
    """As `run` shows it, asking first: the call, the approval (a shell has no timeout), the result."""
    fake_llm.script(Reply(tool_calls=[call("shell_open")]), Reply(text="opened"))
    done = run_cli(isolated_home, "run", "open a shell", "--workspace", str(tmp_path), "--model", fake_llm.model,
                   "--api-base", fake_llm.url, "--api-key", TEST_KEY, "--mode", "ask", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert "None" not in done.stdout + done.stderr
    assert "→ shell_open\n" in done.stdout and f"bash  (in {tmp_path})\n" in done.stderr


def test_a_result_line_that_leads_into_more_lines_says_there_are_more() -> None:
    # `run` printed "✓ 194 ms · Created hello.py (1 line, 15 B). ... line 1 now reads:" and stopped there.
    out, err = io.StringIO(), io.StringIO()
    printer = TextPrinter(out, err)
    output = "Created a.py (1 line, 6 B). The file now has 1 line; line 1 now reads:\n     1\tx = 1"
    printer.on_tool_result(ev.ToolResultEvent(call_id="c1", tool="write_file", ok=True, output=output, duration=0.2))
    printer.on_tool_result(ev.ToolResultEvent(call_id="c2", tool="read_file", ok=True, output="a.py (1 line, 6 B)\n"
                                              "     1\tx = 1", duration=0.01))
    printer.on_tool_result(ev.ToolResultEvent(call_id="c3", tool="bash_exec", ok=True, output="x" * 150, duration=0))
    assert out.getvalue().splitlines() == [
        "  ✓ 200 ms · Created a.py (1 line, 6 B). The file now has 1 line; line 1 now reads: …",
        "  ✓ 10 ms · a.py (1 line, 6 B)", "  ✓ 0 ms · " + "x" * 99 + "…"]  # a cut line says it was cut
