"""Core benchmarks: loop overhead per tool round trip, replace_lines + diff on a big file, --help time.

Run: python tests/bench/bench_core.py   (or python -m tests.bench for every benchmark)
Goals: < 10 ms median per step (HTTP included), < 100 ms for the big-file edit, < 150 ms for --help.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pydantic import SecretStr  # noqa: E402

from agent.approval import ScriptedApprover  # noqa: E402
from agent.config import Config  # noqa: E402
from agent.events import StepStarted  # noqa: E402
from agent.runner import AgentSession  # noqa: E402
from agent.session import SessionStore  # noqa: E402
from agent.tools.base import ToolContext  # noqa: E402
from agent.tools.lines import ReplaceLines, ReplaceLinesArgs  # noqa: E402
from agent.workspaces.local import LocalWorkspace  # noqa: E402

STEPS = 200


async def loop_overhead(model_prefix: str, api_base: str) -> tuple[list[float], list[float]]:
    """Per-step wall time for STEPS read_file round trips, and the part spent outside the model call."""
    stamps: list[float] = []
    in_model: list[float] = []

    def sink(event: object) -> None:
        if isinstance(event, StepStarted):
            stamps.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a.py").write_text("x = 1\n" * 20)
        config = Config(model=f"{model_prefix}/fake-model", api_base=api_base, api_key=SecretStr("sk-bench"),
                        mode="allow", max_steps=STEPS + 5)
        session = AgentSession.open(config, LocalWorkspace(tmp), ScriptedApprover([]), sink,
                                    store=SessionStore(Path(tmp) / "sessions"))
        model = session.llm()
        complete = model.complete

        async def timed(*args: object, **kwargs: object) -> object:
            started = time.perf_counter()
            try:
                return await complete(*args, **kwargs)
            finally:
                in_model.append(time.perf_counter() - started)

        model.complete = timed  # type: ignore[method-assign]
        await session.run("read a.py many times")
        await session.close()
    steps = [b - a for a, b in zip(stamps, stamps[1:])]
    return steps, [step - model for step, model in zip(steps, in_model)]


def scripted_server() -> subprocess.Popen[str]:
    """The scripted server in its own process, as a provider would be."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakellm", str(STEPS)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.url = proc.stdout.readline().strip()  # type: ignore[attr-defined]
    return proc


async def big_file_edit() -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.py"
        path.write_text("".join(f"value_{i} = {i}\n" for i in range(100_000)))
        ws = LocalWorkspace(tmp)
        ctx = ToolContext(workspace=ws, emit=lambda e: None)
        tool = ReplaceLines()
        for i in range(10):
            args = ReplaceLinesArgs(file_path="big.py", start_line=50_000 + i, end_line=50_000 + i,
                                    new_content=f"changed_{i} = {i}")
            started = time.perf_counter()
            changes = await tool.plan(args, ctx)
            diff = changes[0].unified_diff()
            await ws.apply(changes)
            times.append(time.perf_counter() - started)
            assert f"+changed_{i} = {i}" in diff
    return times


def help_time() -> list[float]:
    times = []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for _ in range(10):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tui.cli", "--help"], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return times


def report(name: str, values: list[float], goal_ms: float) -> None:
    ms = sorted(v * 1000 for v in values)
    p95 = ms[int(len(ms) * 0.95) - 1] if len(ms) >= 20 else ms[-1]
    median = statistics.median(ms)
    verdict = "ok" if median < goal_ms else "OVER GOAL"
    print(f"{name:<38} median {median:8.2f} ms   p95 {p95:8.2f} ms   n={len(ms):<4} goal < {goal_ms:g} ms  {verdict}")


def main() -> None:
    server = scripted_server()
    try:
        for prefix, route in (("hosted_vllm", "litellm httpx route"), ("openai", "litellm OpenAI-SDK route")):
            steps, ours = asyncio.run(loop_overhead(prefix, server.url))  # type: ignore[attr-defined]
            report(f"loop step, {route}", steps, 10)
            report("  of which outside the model call", ours, 10)
    finally:
        server.kill()
    report("replace_lines + diff, 100,000 lines", asyncio.run(big_file_edit()), 100)
    report("coder-tui --help (process wall time)", help_time(), 150)


if __name__ == "__main__":
    main()
