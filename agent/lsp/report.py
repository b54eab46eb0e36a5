"""Language-server answers as text the model reads, and positions between the model and LSP.

The model names a symbol by its file, 1-based line and name; LSP counts lines from 0 and columns
in UTF-16 code units. Everything here is plain data (no LSP library), so the executor and the
front ends can use it cheaply.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the app's diff views import this module before the first frame: no pydantic
    from agent.events import DiagnosticInfo

MAX_PER_FILE = 15
SEVERITIES = ("error", "warning", "information", "hint")
SHOWN = ("error", "warning")  # information and hints (an unused name) are not worth the model's tokens


def utf16_column(line: str, index: int) -> int:
    """The LSP column of `line[index]`."""
    return len(line[:index].encode("utf-16-le")) // 2


def python_index(line: str, column: int) -> int:
    """The string index of the LSP `column` in `line`."""
    units = 0
    for index, char in enumerate(line):
        if units >= column:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def ordered(diagnostics: list[DiagnosticInfo]) -> list[DiagnosticInfo]:
    """Errors first, then warnings, each by line; information and hints left out."""
    kept = [d for d in diagnostics if d.severity in SHOWN]
    return sorted(kept, key=lambda d: (SEVERITIES.index(d.severity), d.line, d.column))


def diagnostic_line(path: str, d: DiagnosticInfo) -> str:
    code = f" [{d.code}]" if d.code else ""
    message = " ".join(d.message.split())
    return f"{path}:{d.line}:{d.column} {d.severity}: {message}{code}"


def counts(diagnostics: list[DiagnosticInfo]) -> str:
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = sum(d.severity == "warning" for d in diagnostics)
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


def render_diagnostics(found: dict[str, list[DiagnosticInfo]], after: str = "") -> str:
    """The diagnostics of each file, errors first and capped; `after` says when ("after this edit")."""
    parts = []
    for path, diagnostics in found.items():
        shown = ordered(diagnostics)
        when = f" {after}" if after else ""
        if not shown:
            parts.append(f"Language server: no errors or warnings in {path}{when}.")
            continue
        lines = [f"Language server: {counts(shown)} in {path}{when}:"]
        lines += [f"  {diagnostic_line(path, d)}" for d in shown[:MAX_PER_FILE]]
        if len(shown) > MAX_PER_FILE:
            lines.append(f"  [{len(shown) - MAX_PER_FILE} more not shown; lsp_diagnostics lists them all]")
        parts.append("\n".join(lines))
    return "\n".join(parts)


def reports_errors(note: str) -> bool:
    """Whether a diff view's note (`shown_lines`) counts at least one error."""
    return re.match(r"language server: [1-9]\d* error", note) is not None


def shown_lines(diagnostics: list[DiagnosticInfo] | None, cap: int = 8) -> list[str]:
    """What a diff view shows under a changed file: the language server's count, then its first
    problems, errors first (nothing when no server checked the file)."""
    if diagnostics is None:
        return []
    shown = ordered(diagnostics)
    if not shown:
        return ["language server: no errors or warnings"]
    lines = [f"language server: {counts(shown)}"]
    lines += [f"  {d.line}:{d.column} {d.severity}: {' '.join(d.message.split())[:200]}" for d in shown[:cap]]
    if len(shown) > cap:
        lines.append(f"  … {len(shown) - cap} more")
    return lines
