"""Runs one tool call: validate, gate by mode, ask for approval, checkpoint, execute, report.

Every outcome becomes text for the model; only `StopRun` and cancellation leave this module.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from agent.approval import ApprovalGate, ApprovalRequest, Decision, StopRun, narrow_changes
from agent.diffing import FileChange, count_changes
from agent.events import ApprovalResolved, CheckpointEvent, DiagnosticInfo, FileChanged, ToolCallEvent, ToolResultEvent
from agent.llm import ToolCallRequest
from agent.lsp.report import render_diagnostics
from agent.secrets import redact
from agent.tools.base import CALL_ID, Proposal, Tool, ToolArgs, ToolContext, ToolError
from agent.tools.registry import ArgumentError, ToolRegistry
from agent.tools.textutil import line_count, number, text_size, to_lines
from agent.workspace_input import protected
from agent.workspaces.base import WorkspaceError, refuse_git_path

OUTPUT_CAP = 30_000
CheckpointHook = Callable[[str], Awaitable[Any]]  # label -> CheckpointInfo
TouchedHook = Callable[[list[str] | None], Awaitable[None]]  # the files a change touched (None: find them)
DiagnoseHook = Callable[[list[str]], Awaitable[dict[str, list[DiagnosticInfo]]]]  # changed files -> problems


@dataclass
class Outcome:
    content: str  # what the model reads
    malformed: bool = False  # unknown tool or unusable arguments
    failed: bool = False  # the call did not do what it asked (an error, a denial, a refusal)


class Denied(Exception):
    """The user said no; the message is for the model."""


def cap_output(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    head, tail = text[: OUTPUT_CAP * 3 // 4], text[-OUTPUT_CAP // 4 :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n[… output truncated: {cut} characters not shown …]\n{tail}"


class Executor:
    def __init__(self, registry: ToolRegistry, ctx: ToolContext, gate: ApprovalGate,
                 checkpoint: CheckpointHook | None = None) -> None:
        self.registry = registry
        self.ctx = ctx
        self.gate = gate
        self.checkpoint = checkpoint
        self.touched: TouchedHook | None = None  # tells the checkpoints what undo may restore
        self.diagnose: DiagnoseHook | None = None  # the language servers' word on changed files (agent/lsp)
        self._checkpointed = False
        self.step_label = ""
        self._waited = 0.0  # seconds the current call spent waiting for the user's decision
        self.permits: Callable[[Tool], bool] = lambda tool: True  # the agent profile's tool scope
        self.limit: Callable[[Tool], str | None] = lambda tool: None  # why a tool may not run now (a room peer's request)

    @property
    def screen(self) -> Any:
        """The session's permission rules and hooks (agent/permissions/check.py), shared by every
        executor of the session (plan steps, the planner's reads) through the tool context."""
        return self.ctx.extras.get("permissions")

    def new_turn(self, label: str) -> None:
        """A new model turn: the next change takes a fresh checkpoint first."""
        self._checkpointed = False
        self.step_label = label

    async def execute(self, call: ToolCallRequest, scoped: bool = True) -> Outcome:
        """Run one call through the approvals; `scoped=False`: the agent itself proposes it (a stream
        agent's code block), so the profile's tool scope does not apply (the mode still does)."""
        tool = self.registry.get(call.name)
        if tool is None or not tool.available(self.ctx.workspace):
            return self._malformed(call, self._unknown(call.name, tool), self._readable(tool, call))
        if scoped and not self.permits(tool):
            return self._malformed(call, f"tool {call.name!r} is not offered to this agent (its profile leaves "
                                         f"it out). Available tools: {self._offered()}")
        if tool.name in self.registry.disabled:
            return self._malformed(call, f"tool {call.name!r} is turned off in the user's configuration. "
                                         f"Available tools: {self._offered()}")
        try:
            args = self.registry.parse(tool, call.arguments)
        except ArgumentError as exc:
            return self._malformed(call, str(exc))
        if (problem := unusable_text(args.model_dump())) is not None:
            return self._malformed(call, problem)
        shown = args.model_dump(mode="json")
        self.ctx.emit(ToolCallEvent(call_id=call.id, tool=tool.name, args=shown))
        started, self._waited = time.perf_counter(), 0.0
        CALL_ID.set(call.id)
        if (why := self.limit(tool)) is not None:
            return self._finish(call, tool, started, error=why)
        try:
            output = await self._run(tool, args, call.id)
        except (ToolError, WorkspaceError, Denied) as exc:
            return self._finish(call, tool, started, error=str(exc))
        except OSError as exc:  # a file system refusal no tool foresaw: the model reads it, the run goes on
            return self._finish(call, tool, started, error=f"{tool.name} failed: {exc}")
        except StopRun:
            self._finish(call, tool, started, error="stopped by the user")
            raise
        except asyncio.CancelledError:
            self._finish(call, tool, started, error="cancelled")
            raise
        return self._finish(call, tool, started, output=output)

    def _unknown(self, name: str, tool: Tool | None) -> str:
        offered = self._offered()
        if tool is not None and (reason := getattr(tool, "unavailable_reason", None)) is not None:
            return f"tool {name!r} is withdrawn ({reason()}). Available tools: {offered}"
        if tool is not None:
            why = self.ctx.workspace.exec_unavailable_reason if tool.kind == "exec" else "not available here"
            return f"tool {name!r} is not available in this workspace ({why}). Available tools: {offered}"
        return f"unknown tool {name!r}. Available tools: {offered}"

    def _offered(self) -> str:
        return ", ".join(t.name for t in self.registry.offered(self.ctx.workspace) if self.permits(t))

    def _readable(self, tool: Tool | None, call: ToolCallRequest) -> dict[str, Any] | None:
        """A known tool's arguments as a valid call shows them (None: they do not parse)."""
        try:
            return self.registry.parse(tool, call.arguments).model_dump(mode="json") if tool else None
        except ArgumentError:
            return None

    def _malformed(self, call: ToolCallRequest, message: str, args: dict[str, Any] | None = None) -> Outcome:
        shown = args if args is not None else {"_raw": call.arguments[:2000]}
        self.ctx.emit(ToolCallEvent(call_id=call.id, tool=call.name, args=shown))
        self.ctx.emit(ToolResultEvent(call_id=call.id, tool=call.name, ok=False, error=redact(message)))
        return Outcome(f"Error: {message}", malformed=True, failed=True)

    def _finish(self, call: ToolCallRequest, tool: Tool, started: float,
                output: str | None = None, error: str | None = None) -> Outcome:
        # The tool's own time: how long the user took to decide is not the tool's.
        duration = round(max(0.0, time.perf_counter() - started - self._waited), 4)
        if error is not None:
            error = redact(cap_output(error))
            self.ctx.emit(ToolResultEvent(call_id=call.id, tool=tool.name, ok=False, error=error, duration=duration))
            return Outcome(f"Error: {error}", failed=True)
        text = redact(cap_output(output or ""))
        self.ctx.emit(ToolResultEvent(call_id=call.id, tool=tool.name, ok=True, output=text, duration=duration))
        return Outcome(text)

    async def _run(self, tool: Tool, args: ToolArgs, call_id: str) -> str:
        """The call, screened by the permission rules and hooks (agent/permissions) when there are any."""
        if self.screen is None:
            return await self._gated(tool, args, call_id, None)
        shown = args.model_dump(mode="json")
        screened = await self.screen.before(tool.name, shown)
        if screened.denied is not None:
            raise Denied(screened.denied)
        output = await self._gated(tool, args, call_id, screened.action)
        return await self.screen.after(tool.name, shown, output, screened)

    def _asks(self, tool: Tool, network: bool, verdict: str | None) -> bool:
        """An `ask` rule asks in every mode; an `allow` rule spares the question, except for the network."""
        if verdict == "ask":
            return True
        return self.gate.needs_approval(tool.name, network) and not (verdict == "allow" and not network)

    async def _gated(self, tool: Tool, args: ToolArgs, call_id: str, verdict: str | None) -> str:
        if tool.kind == "read":
            if verdict == "ask":
                await self._ask(tool, args, call_id, Proposal(f"{tool.name} {tool.key_argument(args.model_dump())}"))
            return await tool.run(args, self.ctx)
        if tool.kind == "edit" and (why := self.ctx.workspace.readonly_reason()):
            raise ToolError(f"{tool.name} cannot run: {why}")
        if self.gate.mode == "plan":
            raise ToolError(
                f"{tool.name} is blocked in plan mode, which only reads. Describe the change instead; "
                "the user can switch to ask or allow mode to let you make it."
            )
        proposal = await tool.prepare(args, self.ctx)
        if tool.kind == "edit":
            return await self._edit(tool, args, call_id, proposal, verdict)
        network = tool.kind == "exec" and getattr(args, "network", False) is True
        if self._asks(tool, network, verdict) or (proposal.always_ask and verdict != "allow"):
            await self._ask(tool, args, call_id, proposal)
        await self._checkpoint_once(tool, args)
        try:
            return await tool.run(args, self.ctx)
        finally:
            await self._note_touched(None)  # what a command changed is found in the files

    async def _edit(self, tool: Tool, args: ToolArgs, call_id: str, proposal: Proposal,
                    verdict: str | None = None) -> str:
        changes = [c for c in proposal.changes if c.old != c.new]
        for change in changes:  # every workspace kind: a client-applied edit, a room, GitHub
            refuse_git_path(change.path)
        if not changes:
            return "No change: the file(s) already have this content."
        notes: list[str] = []
        protected = self._protected(changes)
        if protected or self._asks(tool, False, verdict):  # coder-tui's own files: asked in every mode
            summary = protected_note(protected) + proposal.summary
            decision = await self._ask(tool, args, call_id, Proposal(summary, changes), protected)
            changes, notes = narrow_changes(changes, decision)
            if not changes:
                return "Nothing was applied: " + "; ".join(notes)
        await self._checkpoint_once(tool, args)
        await self.ctx.workspace.apply(changes)
        await self._note_touched([c.path for c in changes])
        found: dict[str, list[DiagnosticInfo]] = {}
        try:
            found = await self._diagnostics([c.path for c in changes])
        finally:  # stopped while a server checks: the change is made, and shown
            for change in changes:
                start, end = change.changed_lines()
                self.ctx.emit(FileChanged(path=change.path, diff=change.unified_diff(), line_start=start,
                                          line_end=end, reason=change.reason or tool.name,
                                          diagnostics=found.get(change.path)))
        said = render_diagnostics(found, "after this edit")
        return "\n".join([*(_describe(c) for c in changes), *notes, *([said] if said else [])])

    async def _diagnostics(self, paths: list[str]) -> dict[str, list[DiagnosticInfo]]:
        """What the language servers report on the changed files (nothing when none serves them)."""
        if self.diagnose is None:
            return {}
        try:
            return await self.diagnose(paths)
        except Exception:  # noqa: BLE001 - a server's trouble never fails an edit that was made
            return {}

    def _protected(self, changes: list[FileChange]) -> dict[str, str]:
        """The changed files coder-tui reads as configuration or instructions, each with what it is."""
        root = getattr(self.ctx.workspace, "root", None)
        extra = self.ctx.extras.get("instruction_files") or ()
        found = {c.path: protected.what_at(root, c.path, extra) for c in changes}
        return {path: what for path, what in found.items() if what is not None}

    async def _ask(self, tool: Tool, args: ToolArgs, call_id: str, proposal: Proposal,
                   protected_files: dict[str, str] | None = None) -> Decision:
        request = ApprovalRequest(
            approval_id=f"ap_{uuid.uuid4().hex[:10]}", call_id=call_id, tool=tool.name,
            args=args.model_dump(mode="json"), kind=tool.kind,  # type: ignore[arg-type]
            summary=proposal.summary, changes=proposal.changes, command=proposal.command,
            cwd=proposal.cwd, timeout=proposal.timeout, url=proposal.url, protected=protected_files or {},
        )
        self.ctx.emit(request.to_event())
        if self.screen is not None:  # notification hooks
            self.screen.notify(f"coder-tui asks to run {tool.name}: {proposal.summary}",
                               {"tool_name": tool.name, "tool_input": request.args})
        asked = time.perf_counter()
        try:
            decision = await self.gate.ask(request)
        finally:
            self._waited += time.perf_counter() - asked
        self.ctx.emit(ApprovalResolved(
            approval_id=request.approval_id, decision=decision.decision, feedback=decision.feedback,
            rejected_hunks=decision.rejected_hunks, edited_files=sorted(decision.edited), by=decision.by,
        ))
        if decision.decision == "stop":
            raise StopRun()
        if decision.decision == "deny":
            feedback = f" Their feedback: {decision.feedback}" if decision.feedback else ""
            raise Denied(f"The user denied this {tool.name} call.{feedback}")
        return decision

    async def _note_touched(self, paths: list[str] | None) -> None:
        """Record the files this turn changed, so undo restores them (and only them, unasked)."""
        if self.touched is None or not self._checkpointed:
            return
        try:
            await asyncio.shield(self.touched(paths))
        except Exception:  # noqa: BLE001 - unrecorded, undo asks before restoring them: never a lost change
            return

    async def _checkpoint_once(self, tool: Tool, args: ToolArgs) -> None:
        if self._checkpointed or self.checkpoint is None:
            return
        self._checkpointed = True
        key = tool.key_argument(args.model_dump())
        label = f"{self.step_label}: before {tool.name} {key}".strip()
        info = await self.checkpoint(label[:160])
        if info is not None:
            self.ctx.emit(CheckpointEvent(id=info.id, label=info.label))


def protected_note(found: dict[str, str]) -> str:
    """The approval's first lines when it changes coder-tui's own files (empty when it does not)."""
    if not found:
        return ""
    files = "; ".join(f"{path} ({what})" for path, what in found.items())
    return (f"PROTECTED: this changes a file coder-tui reads as configuration or instructions: {files}. "
            "It is asked in every mode; a change that gives the agent more (a hook, an allow rule, the "
            "sandbox off) applies only once you confirm it with `coder-tui trust`.\n")


def unusable_text(value: Any, key: str = "") -> str | None:
    """Why a string argument can reach no path, command or file (a NUL byte, a lone surrogate)."""
    if isinstance(value, dict):
        found = (unusable_text(v, f"{key}.{k}" if key else str(k)) for k, v in value.items())
    elif isinstance(value, list):
        found = (unusable_text(v, f"{key}[{i}]") for i, v in enumerate(value))
    elif isinstance(value, str):
        if "\x00" in value:
            return f"`{key}` contains a NUL byte (\\x00), which no path, command or text file can hold"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"`{key}` contains an unpaired surrogate (invalid Unicode); send valid text"
        return None
    else:
        return None
    return next((problem for problem in found if problem is not None), None)


def _describe(change: FileChange) -> str:
    """What an applied change did, with the changed region re-numbered for follow-up edits."""
    added, removed = count_changes(change)
    if change.old is None:
        head = f"Created {change.path} ({line_count(len(to_lines(change.new or '')[0]))}, {text_size(change.new or '')})."
    else:
        head = f"Edited {change.path}: +{added} -{removed} lines, now {text_size(change.new or '')}."
    lines, _ = to_lines(change.new or "")
    start, end = change.changed_lines()
    if not lines or start == 0:
        return head + f" The file now has {line_count(len(lines))}."
    lo, hi = max(1, start - 2), min(len(lines), end + 2, start + 40)
    region = number(lines[lo - 1 : hi], lo)
    where = f"line {lo} now reads" if lo == hi else f"lines {lo}-{hi} now read"
    return f"{head} The file now has {line_count(len(lines))}; {where}:\n{region}"
