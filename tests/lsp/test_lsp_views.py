"""The language server's word on a changed file, as the diff views show it: `run`'s printer and
the app's transcript (live and as an earlier turn)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.style import Style

from agent import events as ev
from agent.frontends.printing import TextPrinter

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x: int = 1\n+x: str = 1\n"
BROKEN = [ev.DiagnosticInfo(line=1, column=10, severity="warning", message="unused", source="basedpyright"),
          ev.DiagnosticInfo(line=1, column=10, severity="error", source="basedpyright", code="reportAssignmentType",
                            message='Type "Literal[1]" is not assignable to declared type "str"\n\xa0\xa0more'),
          ev.DiagnosticInfo(line=1, column=1, severity="hint", message="a hint")]


def _changed(diagnostics: list[ev.DiagnosticInfo] | None) -> ev.FileChanged:
    return ev.FileChanged(path="app.py", diff=DIFF, line_start=1, line_end=1, diagnostics=diagnostics)


def test_runs_printer_shows_the_diagnostics_under_the_diff_errors_first() -> None:
    out = io.StringIO()
    printer = TextPrinter(out, io.StringIO())
    printer.handle(_changed(BROKEN))
    printer.handle(_changed([]))
    printer.handle(_changed(None))
    lines = out.getvalue().splitlines()
    assert lines[5:8] == ["  language server: 1 error, 1 warning",
                          '    1:10 error: Type "Literal[1]" is not assignable to declared type "str" more',
                          "    1:10 warning: unused"]
    assert lines.count("  language server: no errors or warnings") == 1
    assert len(lines) == 8 + 6 + 5  # the change no server checked: its diff alone


def test_the_apps_diff_block_and_its_history_block_carry_the_note() -> None:
    from agent.lsp.report import shown_lines
    from tui.widgets.history import Block
    from tui.widgets.historyrender import render_block
    from tui.widgets.transcript import DiffBlock, to_block

    note = "\n".join(shown_lines(BROKEN))
    block = to_block(DiffBlock("app.py", DIFF, note))
    assert isinstance(block, Block) and block.note == note
    console = Console(width=100, record=True, color_system=None)
    console.print(render_block(block, lambda name: Style(), False))
    shown = console.export_text()
    assert "language server: 1 error, 1 warning" in shown and "1:10 error: Type" in shown
