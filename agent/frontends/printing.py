"""Headless output: one JSON object per line, or readable streaming text (ANSI colour on a TTY)."""

from __future__ import annotations

import os
from typing import Any, TextIO

from agent.events import Complete
from agent.secrets import redact

ICONS = {"pending": "○", "in_progress": "◐", "completed": "●", "cancelled": "⊘"}
STEP_ICONS = {"pending": "○", "in_progress": "◐", "done": "✓", "failed": "✗", "skipped": "⊘"}
DECISION_PROMPTS = {
    "review": "Run this plan? [y] approve · f <feedback> new plan · [s] stop · or a JSON plan_decision with edited steps",
    "failed_step": "The step failed twice. [r] retry · [k] skip · [s] stop",
}


class JsonPrinter:
    """Exactly one JSON event per line on stdout, nothing else."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def handle(self, event: Any) -> None:
        self.out.write(redact(event.model_dump_json()) + "\n")
        self.out.flush()

    def notice(self, text: str) -> None:
        """Human notices go nowhere in JSON mode: stdout carries events only."""

    def summary(self, complete: Complete, totals: Any, session_id: str) -> None:
        """The `complete` and `usage` events already carry the summary."""


class TextPrinter:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        color = out.isatty() and not os.environ.get("NO_COLOR")
        self._c = {"dim": "\033[2m", "red": "\033[31m", "green": "\033[32m", "cyan": "\033[36m",
                   "yellow": "\033[33m", "bold": "\033[1m", "off": "\033[0m"} if color else {}
        self._mid_line = False

    def _paint(self, text: str, *styles: str) -> str:
        if not self._c:
            return text
        return "".join(self._c[s] for s in styles) + text + self._c["off"]

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        stream = stream or self.out
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        stream.write(redact(text) + "\n")
        stream.flush()

    def notice(self, text: str) -> None:
        self._line(self._paint(text, "yellow"), self.err)

    def handle(self, event: Any) -> None:
        method = getattr(self, f"_on_{event.type}", None)
        if method is not None:
            method(event)

    def _on_run_started(self, e: Any) -> None:
        self._line(self._paint(f"coder-tui · {e.model} · {e.mode.upper()} · {e.workspace}", "dim"), self.err)

    def _on_text_delta(self, e: Any) -> None:
        self.out.write(redact(e.text))
        self.out.flush()
        self._mid_line = not e.text.endswith("\n")

    def _on_tool_call(self, e: Any) -> None:
        key = next((str(v) for k, v in e.args.items() if k in ("file_path", "path", "command", "url", "pattern")), "")
        self._line(self._paint(f"→ {e.tool} {key[:100]}".rstrip(), "cyan"))

    def _on_tool_result(self, e: Any) -> None:
        ms = f"{e.duration * 1000:.0f} ms"
        if e.ok:
            first = (e.output or "").strip().splitlines()
            self._line(self._paint(f"  ✓ {ms} · {first[0][:100] if first else 'done'}", "dim"))
        else:
            self._line(self._paint(f"  ✗ {ms} · {(e.error or '').splitlines()[0][:200]}", "red"))

    def _on_approval_required(self, e: Any) -> None:
        for preview in e.files:
            self._diff(preview.diff)
        if e.command:
            network = ", asks for network access" if e.args.get("network") is True else ""
            self._line(f"$ {e.command}  (in {e.cwd}, timeout {e.timeout} s{network})", self.err)
        if e.url:
            self._line(f"fetch {e.url}", self.err)
        prompt = f"Allow {e.tool}? [y] once · [a] always for {e.tool} · [n] deny (n <feedback>) · [s] stop"
        self._line(self._paint(prompt, "bold", "yellow"), self.err)

    def _on_approval_resolved(self, e: Any) -> None:
        self._line(self._paint(f"  {e.decision.replace('_', ' ')}" + (f": {e.feedback}" if e.feedback else ""), "dim"))

    def _on_file_changed(self, e: Any) -> None:
        self._diff(e.diff)

    def _diff(self, diff: str) -> None:
        for line in diff.splitlines():
            style = ("green",) if line.startswith("+") else ("red",) if line.startswith("-") else \
                ("cyan",) if line.startswith("@@") else ("dim",)
            self._line(self._paint(line, *style))

    def _on_plan_updated(self, e: Any) -> None:
        self._line(self._paint("plan:", "bold"))
        for item in e.todos:
            self._line(f"  {ICONS[item.status]} {item.content}")

    # -- the structured workflow (agent/planning) --------------------------------------------
    def _on_classification(self, e: Any) -> None:
        self._line(self._paint(f"· {e.task_type.replace('_', ' ')}", "dim"), self.err)

    def _on_plan_created(self, e: Any) -> None:
        self._line(self._paint(f"plan: {e.plan.refined_goal}", "bold"))
        for number, step in enumerate(e.plan.steps, 1):
            self._line(f"  {STEP_ICONS[step.status]} {number}. {step.title}")

    def _on_plan_decision_required(self, e: Any) -> None:
        if e.error:
            self._line(self._paint(f"  {e.error.strip().splitlines()[-1][:200]}", "red"), self.err)
        self._line(self._paint(DECISION_PROMPTS[e.kind], "bold", "yellow"), self.err)

    def _on_step_start(self, e: Any) -> None:
        self._line(self._paint(f"▶ step {e.step_id}: {e.title}", "bold", "cyan"))

    def _on_step_complete(self, e: Any) -> None:
        style = {"done": "green", "failed": "red", "skipped": "yellow"}[e.status]
        summary = e.summary.strip().splitlines()[0][:200] if e.summary.strip() else ""
        self._line(self._paint(f"{STEP_ICONS[e.status]} step {e.step_id} {e.status}" +
                               (f": {summary}" if summary else ""), style))

    def _on_checkpoint(self, e: Any) -> None:
        self._line(self._paint(f"◆ checkpoint {e.id}: {e.label}", "dim"))

    def _on_retrying(self, e: Any) -> None:
        self._line(self._paint(f"… {e.why}; retrying in {e.delay:.1f} s (attempt {e.attempt})", "yellow"), self.err)

    def _on_published(self, e: Any) -> None:
        count = f"{len(e.files)} file{'s' if len(e.files) != 1 else ''}"
        self._line(self._paint(f"published {count} to {e.repository} branch {e.branch} as commit "
                               f"{e.commit[:7]}: {e.compare_url}", "green"), self.err)
    def _on_compacted(self, e: Any) -> None:
        self._line(self._paint(f"◇ compacted the conversation: about {e.tokens_before:,} → {e.tokens_after:,} "
                               "tokens (older turns summarised)", "dim"), self.err)

    def _on_model_fallback(self, e: Any) -> None:
        self._line(self._paint(f"… {e.from_model} failed ({e.reason}); using {e.to_model}", "yellow"), self.err)

    def _on_mcp_server(self, e: Any) -> None:
        if e.state == "running":
            self._line(self._paint(f"◆ MCP server {e.server}: {len(e.tools)} tools", "dim"), self.err)

    def _on_complete(self, e: Any) -> None:
        if e.completion_reason in ("max_steps", "stopped", "budget"):
            self.notice(e.final_response.strip().split("\n\n")[-1])

    def _on_warning(self, e: Any) -> None:
        self.notice(f"warning: {e.message}")

    def _on_error(self, e: Any) -> None:
        self._line(self._paint(f"error: {e.message}", "red"), self.err)

    def summary(self, complete: Complete, totals: Any, session_id: str) -> None:
        cost = f" · ${totals.cost:.4f}" if totals.cost else ""
        tokens = f"{totals.prompt_tokens:,} prompt + {totals.completion_tokens:,} completion tokens"
        steps = f"{complete.iterations} step{'s' if complete.iterations != 1 else ''}"
        mark = self._paint("✓", "green") if complete.success else self._paint("✗", "red")
        self._line("")
        self._line(f"{mark} {complete.completion_reason} · {steps} · {tokens}{cost} · session {session_id}",
                   self.err)
