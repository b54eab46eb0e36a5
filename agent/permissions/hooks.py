"""Hooks: commands the user configured, run at five moments of a session.

    pre_tool_use        before a tool runs (after the deny rules, before the approval)
    post_tool_use       after a tool ran, with its result
    user_prompt_submit  before a prompt reaches the model
    stop                when a run ends
    notification        when an approval waits for the user

Each hook is run by bash in the workspace folder, in the sandbox like the model's commands
(agent/tools/sandbox.py: the same confinement, environment allow-list and network setting), with
a JSON description of the event on stdin. Exit code 2 blocks the action (pre_tool_use: the tool
does not run; user_prompt_submit: the prompt is not sent) and the hook's stderr is the reason the
model (or the user) reads; exit 0 with a JSON object on stdout may say
`{"decision": "allow" | "deny", "reason": "...", "additionalContext": "..."}` (Claude Code's
`hookSpecificOutput` form is read too); any other exit is reported and changes nothing. A hook
that outlives its `timeout` is killed and reported. Hooks come only from the user's config and a
trusted workspace (agent/workspace_input/policy.py).
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.events import WarningEvent
from agent.permissions.settings import HOOK_EVENTS, HookSettings, HookSpec
from agent.secrets import redact

CLAUDE_EVENTS = {"pre_tool_use": "PreToolUse", "post_tool_use": "PostToolUse",
                 "user_prompt_submit": "UserPromptSubmit", "stop": "Stop", "notification": "Notification"}
OUTPUT_CAP = 64 * 1024


@dataclass
class HookOutcome:
    blocked: str | None = None  # why the action must not happen (exit 2, or a "deny" answer)
    allowed: bool = False  # a hook answered "allow" (skips the approval question, never plan mode)
    context: list[str] = field(default_factory=list)  # additionalContext for the model


def matches(spec: HookSpec, tool: str | None) -> bool:
    if spec.match is None or tool is None:
        return True
    return any(fnmatch.fnmatchcase(tool, p.strip()) for p in spec.match.split("|") if p.strip())


class Hooks:
    """The hooks of one session; `run(event, payload, tool)` runs the matching ones in order."""

    def __init__(self, settings: HookSettings, ctx: Any, session_id: Callable[[], str]) -> None:
        self.settings, self.ctx, self.session_id = settings, ctx, session_id
        self._said_no_folder = False

    def __bool__(self) -> bool:
        return self.settings.any()

    async def run(self, event: str, payload: dict[str, Any], tool: str | None = None) -> HookOutcome:
        assert event in HOOK_EVENTS
        outcome = HookOutcome()
        specs = [s for s in getattr(self.settings, event) if matches(s, tool)]
        if specs and self.ctx.workspace.root is None:
            self._warn_once(f"{len(specs)} {event} hook(s) not run: hooks run in a local workspace folder only")
            return outcome
        for spec in specs:
            await self._one(spec, event, payload, outcome)
            if outcome.blocked is not None:
                break
        return outcome

    async def _one(self, spec: HookSpec, event: str, payload: dict[str, Any], outcome: HookOutcome) -> None:
        done = await self._exec(spec, json.dumps(self._payload(spec, event, payload), default=str))
        if done is None:
            return
        code, out, err = done
        if code == 2:
            outcome.blocked = err.strip() or f"blocked by the {event} hook `{spec.command}`"
            return
        if code != 0:
            first = (err.strip().splitlines() or [""])[-1]
            self._warn(f"{event} hook `{spec.command}` failed (exit code {code}){': ' + first if first else ''}")
            return
        self._read_answer(spec, event, out, outcome)

    def _read_answer(self, spec: HookSpec, event: str, out: str, outcome: HookOutcome) -> None:
        text = out.strip()
        if not text.startswith("{"):
            if text and event == "user_prompt_submit":
                outcome.context.append(text)
            return
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            self._warn(f"{event} hook `{spec.command}` printed something that is not JSON; its answer is ignored")
            return
        specific = answer.get("hookSpecificOutput") if isinstance(answer.get("hookSpecificOutput"), dict) else {}
        decision = specific.get("permissionDecision") or answer.get("decision")
        reason = specific.get("permissionDecisionReason") or answer.get("reason") or ""
        context = specific.get("additionalContext") or answer.get("additionalContext")
        if isinstance(context, str) and context.strip():
            outcome.context.append(context.strip())
        if decision in ("deny", "block") or answer.get("continue") is False:
            outcome.blocked = str(reason or answer.get("stopReason") or f"denied by the {event} hook `{spec.command}`")
        elif decision in ("allow", "approve"):
            outcome.allowed = True

    def _payload(self, spec: HookSpec, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        from agent.permissions.claude import OURS_TO_CLAUDE

        body = {"hook_event_name": CLAUDE_EVENTS[event], "event": event, "session_id": self.session_id(),
                "cwd": str(self.ctx.workspace.root), **payload}
        if spec._claude and "tool_name" in body:
            body["tool_name"] = OURS_TO_CLAUDE.get(body["tool_name"], body["tool_name"])
        return body

    async def _exec(self, spec: HookSpec, stdin: str) -> tuple[int, str, str] | None:
        """(exit code, stdout, stderr) of the hook run in the sandbox; None when it could not finish."""
        from agent.tools import sandbox
        from agent.tools.shell import default_shell

        try:
            await sandbox.ready(self.ctx)
            argv, sandboxed = sandbox.wrap(self.ctx, [default_shell(), "-c", spec.command],
                                           sandbox.policy_of(self.ctx).network)
        except Exception as exc:  # noqa: BLE001 - a hook that cannot start is reported, never a traceback
            self._warn(f"hook `{spec.command}` could not start: {exc}")
            return None
        if sandboxed:
            sandbox.begin(self.ctx)
        try:
            return await self._started(spec, stdin, argv, sandboxed)
        finally:
            if sandboxed:
                await asyncio.shield(sandbox.end(self.ctx))

    async def _started(self, spec: HookSpec, stdin: str, argv: list[str], sandboxed: bool) -> tuple[int, str, str] | None:
        from agent.tools.shell import child_env, kill_group

        root = str(self.ctx.workspace.root)
        try:
            env = {**child_env(self.ctx, sandboxed), "CODER_TUI_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root}
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=root, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
        except Exception as exc:  # noqa: BLE001 - a hook that cannot start is reported, never a traceback
            self._warn(f"hook `{spec.command}` could not start: {exc}")
            return None
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), spec.timeout)
        except TimeoutError:
            await kill_group(proc)
            self._warn(f"hook `{spec.command}` did not finish within {spec.timeout:g} s and was killed "
                       "(raise its `timeout` if it needs longer)")
            return None
        except asyncio.CancelledError:
            await kill_group(proc)
            raise
        decode = lambda data: redact(data[:OUTPUT_CAP].decode("utf-8", errors="replace"))  # noqa: E731
        return proc.returncode or 0, decode(out), decode(err)

    def _warn(self, message: str) -> None:
        self.ctx.emit(WarningEvent(message=redact(message)))

    def _warn_once(self, message: str) -> None:
        if not self._said_no_folder:
            self._said_no_folder = True
            self._warn(message)
