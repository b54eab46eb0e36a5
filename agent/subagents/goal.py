"""A goal: keep working until a check command passes (`run --until CMD`, the app's `/goal CMD`).

Each round is a turn of the session, then the check, run in the workspace folder by the shell (the
command is the user's own, from the command line or the prompt). Its exit code says whether the
goal is met; when it is not, its output (the end of it) goes to the model as the next turn's prompt.
The goal ends when the check passes, after `max_rounds` rounds, or when a turn ends for a reason
more work cannot fix (stopped, budget spent, a fatal error). Each check is a `goal_round` event.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.events import Complete, GoalRound, WarningEvent
from agent.secrets import redact

if TYPE_CHECKING:
    from agent.session.core import AgentSession

DEFAULT_ROUNDS = 10
CHECK_TIMEOUT = 600.0
OUTPUT_KEPT = 6_000  # characters of the check's output the model reads (the end: where the failures are)
FINAL = ("stopped", "budget", "error")


async def run_check(command: str, cwd: str | None) -> tuple[int | None, str]:
    """The check's exit code (None: it did not finish in time) and its output, stdout and stderr together."""
    process = await asyncio.create_subprocess_shell(
        command, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True, env=os.environ.copy())
    try:
        out, _ = await asyncio.wait_for(process.communicate(), CHECK_TIMEOUT)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        process.kill()
        await process.wait()
        return None, f"(the check did not finish in {CHECK_TIMEOUT:.0f} s and was stopped)"
    text = out.decode("utf-8", "replace")
    return process.returncode, redact(text[-OUTPUT_KEPT:])


def goal_prompt(check: str) -> str:
    """The first round's prompt of a goal given as its check alone (the app's `/goal CMD`)."""
    return (f"Your goal: make the check `{check}` pass (it is run in the workspace folder after each of your "
            "rounds; exit code 0 means done). Find out why it fails, fix that, and stop when you believe it "
            "passes. Do not change the check itself.")


def next_prompt(check: str, code: int | None, output: str, round_: int, max_rounds: int) -> str:
    how = "did not finish" if code is None else f"exited with {code}"
    return (f"The goal is not met yet: the check `{check}` {how} (round {round_} of {max_rounds}). Its output "
            f"(the end):\n```\n{output.strip()}\n```\nKeep working until the check passes; do not change the "
            "check itself.")


async def pursue(session: AgentSession, prompt: str, check: str, max_rounds: int = DEFAULT_ROUNDS,
                 images: list[Any] | None = None,
                 checker: Callable[[str, str | None], Any] = run_check,
                 halted: Callable[[], bool] = lambda: False) -> Complete:
    """Turns of `session` until `check` passes or `max_rounds` turns are done; the last turn's Complete
    (a goal that was not met says so in its final response). `halted`: the user stopped the goal
    between two turns (while its check ran), so no next round starts."""
    cwd = str(session.workspace.root) if session.workspace.root is not None else None
    complete = await session.run(prompt, images)
    for round_ in range(1, max_rounds + 1):
        if complete.completion_reason in FINAL or halted():
            return complete
        code, output = await checker(check, cwd)
        passed = code == 0
        session.emit(GoalRound(round=round_, max_rounds=max_rounds, check=check, passed=passed,
                               exit_code=code, output=output[-2000:]))
        if passed:
            return complete
        if round_ == max_rounds:
            break
        if halted():
            return complete
        complete = await session.run(next_prompt(check, code, output, round_, max_rounds))
    note = f"The goal was not met: `{check}` still fails after {max_rounds} round(s) (--max-rounds)."
    session.emit(WarningEvent(message=note))
    return complete.model_copy(update={"success": False, "final_response": f"{complete.final_response}\n\n{note}"})
