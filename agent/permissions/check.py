"""What the rules and the hooks say about one tool call, before and after it runs (the executor asks).

Order: a `deny` rule refuses first (no hook can overrule it); then the `pre_tool_use` hooks may
block (exit 2 or "deny") or allow; then the verdict is the rules' (`ask` beats a hook's allow).
Plan mode is checked by the executor after this and still never lets a change through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.permissions.engine import Permissions, Verdict, call_paths
from agent.permissions.hooks import Hooks

RESULT_CAP = 8_000  # characters of a tool's result a post_tool_use hook reads


@dataclass
class Screened:
    action: str | None = None  # "allow" | "ask" | None (the mode decides)
    denied: str | None = None  # why the call must not run (for the model)
    context: list[str] = field(default_factory=list)  # hooks' additionalContext, added to the result


class CallScreen:
    def __init__(self, rules: Permissions, hooks: Hooks | None, workspace: Any) -> None:
        self.rules, self.hooks, self.workspace = rules, hooks, workspace
        self._tasks: set[Any] = set()  # notification hooks running in the background

    def verdict(self, tool: str, args: dict[str, Any]) -> Verdict:
        return self.rules.decide(tool, args, call_paths(self.workspace, tool, args))

    async def before(self, tool: str, args: dict[str, Any]) -> Screened:
        verdict = self.verdict(tool, args)
        if verdict.action == "deny":
            return Screened("deny", f"{tool} is denied by your permission rule {verdict.reason()}; "
                                    "do not try to get around it (ask the user instead).")
        screened = Screened(verdict.action)
        if self.hooks:
            outcome = await self.hooks.run("pre_tool_use", {"tool_name": tool, "tool_input": args}, tool)
            screened.context = outcome.context
            if outcome.blocked is not None:
                screened.denied = f"A pre_tool_use hook blocked this {tool} call: {outcome.blocked}"
            elif outcome.allowed and screened.action is None:
                screened.action = "allow"
        return screened

    async def after(self, tool: str, args: dict[str, Any], output: str, screened: Screened) -> str:
        context = list(screened.context)
        if self.hooks:
            outcome = await self.hooks.run("post_tool_use", {"tool_name": tool, "tool_input": args,
                                                             "tool_response": output[:RESULT_CAP]}, tool)
            context += outcome.context
            if outcome.blocked is not None:
                context.append(f"A post_tool_use hook says: {outcome.blocked}")
        if not context:
            return output
        return output + "\n\n" + "\n".join(f"[hook] {line}" for line in context)

    def notify(self, message: str, payload: dict[str, Any]) -> None:
        """An approval waits: the notification hooks run in the background (the question is not held)."""
        if self.hooks and self.hooks.settings.notification:
            import asyncio

            task = asyncio.get_running_loop().create_task(
                self.hooks.run("notification", {"message": message, **payload}, payload.get("tool_name")))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)


def attach(session: Any) -> CallScreen:
    """Give a session's executors the rules and hooks of its config (open_session calls this)."""
    rules = getattr(session.agent.input, "permissions", None) or Permissions.from_config(session.config)
    hooks = Hooks(session.config.hooks, session.ctx, lambda: session.session_id)
    screen = CallScreen(rules, hooks, session.workspace)
    session.ctx.extras["permissions"] = screen
    return screen


async def submit_prompt(session: Any, prompt: str) -> tuple[str, str | None]:
    """The prompt as the model gets it (hooks may add context) and, when a hook blocks it, why."""
    screen = session.ctx.extras.get("permissions")
    if not isinstance(screen, CallScreen) or not screen.hooks or not screen.hooks.settings.user_prompt_submit:
        return prompt, None
    outcome = await screen.hooks.run("user_prompt_submit", {"prompt": prompt})
    if outcome.blocked is not None:
        return prompt, outcome.blocked
    if outcome.context:
        prompt += "\n\n" + "\n".join(f"[hook context] {line}" for line in outcome.context)
    return prompt, None


async def run_stopped(session: Any, complete: Any, again: bool) -> str | None:
    """The stop hooks, when a run ends: a reason to go on (exit 2 / "block") the first time, else None."""
    screen = session.ctx.extras.get("permissions")
    if not isinstance(screen, CallScreen) or not screen.hooks or not screen.hooks.settings.stop:
        return None
    outcome = await screen.hooks.run("stop", {"final_response": complete.final_response,
                                              "completion_reason": complete.completion_reason,
                                              "stop_hook_active": again})
    if outcome.blocked is None or again or complete.completion_reason != "answered":
        return None
    return outcome.blocked
