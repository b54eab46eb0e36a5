"""Security benchmark: what the bubblewrap sandbox costs per shell command.

Run: python tests/bench/bench_security.py   (or python -m tests.bench for every benchmark)
Goal: the sandbox adds < 30 ms (median) to a one-shot command and to opening a persistent shell.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agent.tools import sandbox  # noqa: E402
from agent.tools.base import ToolContext  # noqa: E402
from agent.tools.shell import BashExec, BashExecArgs, ShellOpen, ShellOpenArgs, shells  # noqa: E402
from agent.workspaces.local import LocalWorkspace  # noqa: E402

RUNS = 40


async def one_shot(root: Path, mode: str) -> list[float]:
    ctx = ToolContext(workspace=LocalWorkspace(root), emit=lambda event: None)
    ctx.extras["sandbox"] = sandbox.SandboxPolicy(mode)
    tool, args = BashExec(), BashExecArgs(command="true")
    await tool.run(args, ctx)  # warm: the probe runs once per folder
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        out = await tool.run(args, ctx)
        times.append(time.perf_counter() - started)
        assert out.startswith("exit code: 0"), out
    return times


async def shell_open(root: Path, mode: str) -> list[float]:
    ctx = ToolContext(workspace=LocalWorkspace(root), emit=lambda event: None)
    ctx.extras["sandbox"] = sandbox.SandboxPolicy(mode)
    tool, times = ShellOpen(), []
    for _ in range(RUNS // 4):
        started = time.perf_counter()
        await tool.run(ShellOpenArgs(), ctx)
        session = next(iter(shells(ctx).sessions.values()))
        await session.run("true", 10)  # the shell answers: it is up
        times.append(time.perf_counter() - started)
        await shells(ctx).close_all()
    return times


def report(name: str, plain: list[float], boxed: list[float], goal_ms: float) -> None:
    base, inside = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
    cost = inside - base
    verdict = "ok" if cost < goal_ms else "OVER GOAL"
    print(f"{name:<34} off {base:7.2f} ms   bwrap {inside:7.2f} ms   cost {cost:7.2f} ms   "
          f"n={len(boxed):<3} goal < {goal_ms:g} ms  {verdict}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        why = sandbox.probe(str(root))
        if why is not None:
            print(f"sandbox cost: not measured: {why}; {sandbox.INSTALL_HINT}")
            return
        report("bash_exec `true`, sandbox cost", asyncio.run(one_shot(root, "off")),
               asyncio.run(one_shot(root, "bwrap")), 30)
        report("shell_open until ready, cost", asyncio.run(shell_open(root, "off")),
               asyncio.run(shell_open(root, "bwrap")), 30)


if __name__ == "__main__":
    main()
