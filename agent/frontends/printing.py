"""Headless output: one JSON object per line, or readable streaming text (ANSI colour on a TTY)."""

from __future__ import annotations

import os
from typing import Any, TextIO

from agent import events as ev
from agent.compaction import describe
from agent.consumer import EventHandler
from agent.lsp.report import shown_lines
from agent.secrets import redact
from agent.textsafe import json_line, shown_copy, visible
from agent.tools.textutil import line_count

ICONS = {"pending": "○", "in_progress": "◐", "completed": "●", "cancelled": "⊘"}
STEP_ICONS = {"pending": "○", "in_progress": "◐", "done": "✓", "failed": "✗", "skipped": "⊘"}
DECISION_PROMPTS = {
    "review": "Run this plan? [y] approve · f <feedback> new plan · [s] stop · or a JSON plan_decision with edited steps",
    "failed_step": "The step failed twice. [r] retry · [k] skip · [s] stop",
}


class JsonPrinter(EventHandler):
    """Exactly one JSON event per line on stdout, nothing else."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def unhandled(self, event: ev.Event) -> None:
        """Every event is printed, whatever its class (bidi, C1 and U+2028/9 as \\u escapes)."""
        self.out.write(json_line(redact(event.model_dump_json())) + "\n")
        self.out.flush()

    def notice(self, text: str) -> None:
        """Human notices go nowhere in JSON mode: stdout carries events only."""

    def summary(self, complete: ev.Complete, totals: Any, session_id: str) -> None:
        """The `complete` and `usage` events already carry the summary."""


class RunJsonPrinter(JsonPrinter):
    """`run --json`: as JsonPrinter, and the run's `complete` is printed once its verdict is known.
    It waits while errors come (the next other event, or the summary, prints it): after approvals
    denied because stdin closed (exit code 3) the error saying so comes first, then `complete` with
    `success: false` and `completion_reason: denied`; after another error that fails the run
    (publishing) `success: false`; never a `complete {success: true}` that an error after it
    contradicts (as `--json-format seed` ends, agent/frontends/seedevents.py)."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self._ending: ev.Complete | None = None

    def handle(self, event: ev.Event) -> None:
        if self._ending is not None and not isinstance(event, ev.ErrorEvent):
            self._print_ending(self._ending)  # the run went on (a stop hook's second turn): in order
        super().handle(event)

    def on_complete(self, event: ev.Complete) -> None:
        self._ending = event

    def on_error(self, event: ev.ErrorEvent) -> None:
        if self._ending is not None and not event.recoverable:
            self._ending = self._ending.model_copy(update={"success": False})
        self.unhandled(event)

    def _print_ending(self, ending: ev.Complete) -> None:
        self._ending = None
        self.unhandled(ending)

    def summary(self, complete: ev.Complete, totals: Any, session_id: str) -> None:
        """The held `complete`, with the verdict's reason (`complete`: the run's, perhaps made `denied`)."""
        if self._ending is not None:
            self._print_ending(self._ending.model_copy(update={
                "success": self._ending.success and complete.success, "completion_reason": complete.completion_reason}))


class TextPrinter(EventHandler):
    """Readable streaming text: the answer on stdout, what happens around it on stderr."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        color = out.isatty() and not os.environ.get("NO_COLOR")
        self._c = {"dim": "\033[2m", "red": "\033[31m", "green": "\033[32m", "cyan": "\033[36m",
                   "yellow": "\033[33m", "bold": "\033[1m", "off": "\033[0m"} if color else {}
        self._mid_line = False
        self._thinking = False  # the model's reasoning (on stderr) ends mid-line
        self._shown: set[str] = set()  # diffs shown for approval, not printed again once written

    def handle(self, event: ev.Event) -> None:
        """Each event shown with its control and bidi characters made visible (agent/textsafe.py)."""
        super().handle(shown_copy(event))

    def _paint(self, text: str, *styles: str) -> str:
        if not self._c:
            return text
        return "".join(self._c[s] for s in styles) + text + self._c["off"]

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        stream = stream or self.out
        self._end_reasoning()
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        stream.write(redact(text) + "\n")
        stream.flush()

    def notice(self, text: str) -> None:
        self._line(self._paint(visible(text), "yellow"), self.err)

    def on_run_started(self, event: ev.RunStarted) -> None:
        self._line(self._paint(f"coder-tui · {event.model} · {event.mode.upper()} · {event.workspace}", "dim"),
                   self.err)

    def on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        """The model's reasoning, dimmed on stderr (stdout keeps the answer alone)."""
        self.err.write(self._paint(redact(event.text), "dim"))
        self.err.flush()
        self._thinking = not event.text.endswith("\n")

    def _end_reasoning(self) -> None:
        if self._thinking:
            self.err.write("\n")
            self._thinking = False

    def on_text_delta(self, event: ev.TextDelta) -> None:
        self._end_reasoning()
        self.out.write(redact(event.text))
        self.out.flush()
        self._mid_line = not event.text.endswith("\n")

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        key = next((str(v) for k, v in event.args.items()
                    if k in ("file_path", "path", "command", "url", "pattern") and v is not None), "")
        self._line(self._paint(f"→ {event.tool} {key[:100]}".rstrip(), "cyan"))

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        ms = f"{event.duration * 1000:.0f} ms"
        if event.ok:
            first = (event.output or "").strip().splitlines()
            summary = (first[0] if len(first[0]) <= 100 else first[0][:99] + "…") if first else "done"
            if summary.endswith(":") and len(first) > 1:  # what it leads into is not printed
                summary += " …"
            self._line(self._paint(f"  ✓ {ms} · {summary}", "dim"))
        else:
            self._line(self._paint(f"  ✗ {ms} · {(event.error or '').splitlines()[0][:200]}", "red"))

    def on_approval_required(self, event: ev.ApprovalRequired) -> None:
        for preview in event.files:
            self._diff(preview.diff)
            self._shown.add(preview.diff)
        self._reason(str(event.args.get("reason") or "") if event.files else "")
        for preview in event.files:
            if preview.protected:  # coder-tui's own configuration or instructions: said before the question
                self._line(self._paint(f"! {visible(preview.path)} is {preview.protected}: asked in every mode; what it "
                                       "would let the agent do applies once you confirm it (`coder-tui trust`)",
                                       "bold", "red"), self.err)
        if event.command:
            network = ", asks for network access" if event.args.get("network") is True else ""
            timeout = f", timeout {event.timeout} s" if event.timeout is not None else ""  # shell_open has none
            self._line(f"$ {event.command}  (in {event.cwd}{timeout}{network})", self.err)
        if event.url:
            self._line(f"fetch {event.url}", self.err)
        always = f"[a] always for {event.tool}" + (" (never the network: commands that need it ask)"
                                                    if event.kind == "exec" else "")
        if event.asker:  # a subagent asks, through its parent
            self._line(self._paint(f"subagent {event.child_id} asks ({event.asker})", "bold"), self.err)
        prompt = f"Allow {event.tool}? [y] once · {always} · [n] deny (n <feedback>) · [s] stop"
        self._line(self._paint(prompt, "bold", "yellow"), self.err)

    def on_subagent_started(self, event: ev.SubagentStarted) -> None:
        self._line(self._paint(f"⇉ subagent {event.child_id} ({event.agent}, {event.mode}): {event.task[:100]}", "cyan"),
                   self.err)

    def on_subagent_finished(self, event: ev.SubagentFinished) -> None:
        cost = f", ${event.cost:.4f}" if event.cost is not None else ""
        mark, style = ("✓", "dim") if event.ok else ("✗", "red")
        self._line(self._paint(f"  {mark} subagent {event.child_id} {event.reason} · {event.tokens:,} tokens{cost} · "
                               f"{event.ended - event.started:.1f} s", style), self.err)

    def on_goal_round(self, event: ev.GoalRound) -> None:
        verdict = "passed" if event.passed else f"failed (exit {event.exit_code})"
        self._line(self._paint(f"◎ goal round {event.round}/{event.max_rounds}: `{event.check}` {verdict}",
                               "green" if event.passed else "yellow"), self.err)

    def on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        feedback = f": {event.feedback}" if event.feedback else ""
        by = f" (by {event.by})" if event.by else ""
        self._line(self._paint(f"  {event.decision.replace('_', ' ')}{by}{feedback}", "dim"))

    def on_file_changed(self, event: ev.FileChanged) -> None:
        if event.diff in self._shown:  # approved as shown: the diff is on screen already
            self._shown.discard(event.diff)
        else:
            self._diff(event.diff)
            self._reason(event.reason)
        errors = any(d.severity == "error" for d in event.diagnostics or [])
        for text in shown_lines(event.diagnostics):  # the language server's word on the changed file
            self._line(self._paint(f"  {text}", "red" if errors else "dim"))

    def _reason(self, reason: str) -> None:
        if reason.strip():
            self._line(self._paint(f"  why: {' '.join(reason.split())}", "dim"))

    def _diff(self, diff: str) -> None:
        for line in diff.splitlines():
            style = ("green",) if line.startswith("+") else ("red",) if line.startswith("-") else \
                ("cyan",) if line.startswith("@@") else ("dim",)
            self._line(self._paint(line, *style))

    def on_plan_updated(self, event: ev.PlanUpdated) -> None:
        self._line(self._paint("plan:", "bold"))
        for item in event.todos:
            self._line(f"  {ICONS[item.status]} {item.content}")

    # -- the structured workflow (agent/planning) --------------------------------------------
    def on_classification(self, event: ev.ClassificationEvent) -> None:
        self._line(self._paint(f"· {event.task_type.replace('_', ' ')}", "dim"), self.err)

    def on_plan_created(self, event: ev.PlanCreated) -> None:
        self._line(self._paint(f"plan: {event.plan.refined_goal}", "bold"))
        for number, step in enumerate(event.plan.steps, 1):
            self._line(f"  {STEP_ICONS[step.status]} {number}. {step.title}")

    def on_plan_decision_required(self, event: ev.PlanDecisionRequired) -> None:
        if event.error:
            self._line(self._paint(f"  {event.error.strip().splitlines()[-1][:200]}", "red"), self.err)
        self._line(self._paint(DECISION_PROMPTS[event.kind], "bold", "yellow"), self.err)

    def on_step_start(self, event: ev.StepStart) -> None:
        self._line(self._paint(f"▶ step {event.step_id}: {event.title}", "bold", "cyan"))

    def on_step_complete(self, event: ev.StepComplete) -> None:
        style = {"done": "green", "failed": "red", "skipped": "yellow"}[event.status]
        summary = event.summary.strip().splitlines()[0][:200] if event.summary.strip() else ""
        self._line(self._paint(f"{STEP_ICONS[event.status]} step {event.step_id} {event.status}" +
                               (f": {summary}" if summary else ""), style))

    def on_checkpoint(self, event: ev.CheckpointEvent) -> None:
        self._line(self._paint(f"◆ checkpoint {event.id}: {event.label}", "dim"))

    def on_retrying(self, event: ev.Retrying) -> None:
        self._line(self._paint(f"… {event.why}; retrying in {event.delay:.1f} s (attempt {event.attempt})", "yellow"),
                   self.err)

    def on_published(self, event: ev.Published) -> None:
        count = f"{len(event.files)} file{'s' if len(event.files) != 1 else ''}"
        self._line(self._paint(f"published {count} to {event.repository} branch {event.branch} as commit "
                               f"{event.commit[:7]}: {event.compare_url}", "green"), self.err)

    def on_file_ready(self, event: ev.FileReady) -> None:
        self._line(self._paint(f"saved {event.path} ({line_count(event.lines)}) from a code block", "green"), self.err)

    def on_compacted(self, event: ev.Compacted) -> None:
        self._line(self._paint(f"◇ {describe(event)}", "dim"), self.err)

    def on_model_fallback(self, event: ev.ModelFallback) -> None:
        self._line(self._paint(f"… {event.from_model} failed ({event.reason}); using {event.to_model}", "yellow"),
                   self.err)

    def on_mcp_server(self, event: ev.McpServerState) -> None:
        if event.state == "running":
            self._line(self._paint(f"◆ MCP server {event.server}: {len(event.tools)} tools", "dim"), self.err)

    def on_complete(self, event: ev.Complete) -> None:
        if event.completion_reason in ("max_steps", "stopped", "budget"):
            self.notice(event.final_response.strip().split("\n\n")[-1])

    def on_warning(self, event: ev.WarningEvent) -> None:
        self.notice(f"warning: {event.message}")

    def on_error(self, event: ev.ErrorEvent) -> None:
        self._line(self._paint(f"error: {event.message}", "red"), self.err)

    def summary(self, complete: ev.Complete, totals: Any, session_id: str) -> None:
        cost = f" · ${totals.cost:.4f}" if totals.cost else ""
        tokens = f"{totals.prompt_tokens:,} prompt + {totals.completion_tokens:,} completion tokens"
        if getattr(totals, "reasoning_tokens", 0):
            tokens += f" ({totals.reasoning_tokens:,} reasoning)"
        steps = f"{complete.iterations} step{'s' if complete.iterations != 1 else ''}"
        mark = self._paint("✓", "green") if complete.success else self._paint("✗", "red")
        self._line("")
        self._line(f"{mark} {complete.completion_reason} · {steps} · {tokens}{cost} · session {session_id}",
                   self.err)
