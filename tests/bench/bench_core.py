"""Core benchmarks: loop overhead per tool round trip, replace_lines + diff on a big file, --help time.

Run: python tests/bench/bench_core.py   (or python -m tests.bench for every benchmark)
Goals: < 10 ms median per step (HTTP included), < 100 ms for the big-file edit, < 150 ms for --help.

A loop step is one read_file round trip against a scripted server in its own process: through the
built-in clients (Chat Completions, Anthropic Messages, Ollama's OpenAI endpoint), and through
litellm's adapters (`model_path = "litellm"`: its OpenAI client, its Anthropic adapter).
"cpu" is the client process's CPU time per step (all its threads): on a busy machine the wall
time waits for cores, the CPU time does not. The "item 17" lines sum it up per adapter (issue 15).
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
from agent.session.core import AgentSession  # noqa: E402
from agent.session.record import SessionStore  # noqa: E402
from agent.tools.base import ToolContext  # noqa: E402
from agent.tools.lines import ReplaceLines, ReplaceLinesArgs  # noqa: E402
from agent.workspaces.local import LocalWorkspace  # noqa: E402

STEPS = 200
STEP_GOAL_MS = 10  # issue 15, item 17


async def loop_overhead(model: str, api_base: str, path: str = "auto") -> tuple[list[float], list[float], list[float]]:
    """Per-step wall time for STEPS read_file round trips, the part spent outside the model call,
    and the client's CPU time per step."""
    stamps: list[float] = []
    cpu: list[float] = []
    in_model: list[float] = []

    def sink(event: object) -> None:
        if isinstance(event, StepStarted):
            stamps.append(time.perf_counter())
            cpu.append(time.process_time())

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a.py").write_text("x = 1\n" * 20)
        config = Config(model=model, api_base=api_base, api_key=SecretStr("sk-bench"),  # type: ignore[arg-type]
                        mode="allow", max_steps=STEPS + 5, model_path=path)
        session = AgentSession.open(config, LocalWorkspace(tmp), ScriptedApprover([]), sink,
                                    store=SessionStore(Path(tmp) / "sessions"))
        llm = session.llm()
        complete = llm.complete

        async def timed(*args: object, **kwargs: object) -> object:
            started = time.perf_counter()
            try:
                return await complete(*args, **kwargs)
            finally:
                in_model.append(time.perf_counter() - started)

        llm.complete = timed  # type: ignore[method-assign]
        await session.run("read a.py many times")
        await session.close()
    steps = [b - a for a, b in zip(stamps, stamps[1:])]
    return steps, [step - model for step, model in zip(steps, in_model)], [b - a for a, b in zip(cpu, cpu[1:])]


def scripted_server(wire: str = "openai") -> subprocess.Popen[str]:
    """The scripted server in its own process, as a provider would be."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakellm", str(STEPS), wire], env=env, cwd=ROOT,
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


def figures(values: list[float]) -> tuple[float, float]:
    """(median, p95) in milliseconds."""
    ms = sorted(v * 1000 for v in values)
    p95 = ms[int(len(ms) * 0.95) - 1] if len(ms) >= 20 else ms[-1]
    return statistics.median(ms), p95


def report(name: str, values: list[float], goal_ms: float) -> None:
    median, p95 = figures(values)
    verdict = "ok" if median < goal_ms else "OVER GOAL"
    print(f"{name:<38} median {median:8.2f} ms   p95 {p95:8.2f} ms   n={len(values):<4} goal < {goal_ms:g} ms  {verdict}")


def item_17(label: str, steps: list[float], cpu: list[float]) -> None:
    """The issue 15 item 17 figure, on one line: a loop step including HTTP on loopback."""
    wall, wall_p95 = figures(steps)
    used, used_p95 = figures(cpu)
    verdict = "ok" if wall < STEP_GOAL_MS else "OVER GOAL"
    print(f"item 17, loop step incl. HTTP on loopback ({label}): wall median {wall:.2f} ms p95 {wall_p95:.2f} ms, "
          f"client cpu median {used:.2f} ms p95 {used_p95:.2f} ms; goal < {STEP_GOAL_MS:g} ms a step  {verdict}")


ROUTES = [  # (label, wire format of the scripted server, model, path)
    ("built-in Chat Completions", "openai", "openai/fake-model", "auto"),
    ("built-in Anthropic Messages", "anthropic", "anthropic/claude-sonnet-4-5", "auto"),
    ("built-in, Ollama's OpenAI endpoint", "ollama", "ollama_chat/qwen2.5-coder", "auto"),
    ("litellm, OpenAI SDK", "openai", "openai/fake-model", "litellm"),
    ("litellm, Anthropic Messages", "anthropic", "anthropic/claude-sonnet-4-5", "litellm"),
]


def main() -> None:
    headline: list[tuple[str, list[float], list[float]]] = []
    for label, wire, model, path in ROUTES:
        server = scripted_server(wire)
        try:
            steps, ours, cpu = asyncio.run(loop_overhead(model, server.url, path))  # type: ignore[attr-defined]
        finally:
            server.kill()
        if len(steps) < 2:  # a run that made no tool round trip has no step to time
            print(f"loop step, {label}: not measured, the run made {len(steps) + 1} step(s) instead of {STEPS}")
            continue
        report(f"loop step, {label}", steps, STEP_GOAL_MS)
        report("  of which outside the model call", ours, STEP_GOAL_MS)
        report("  client cpu per step", cpu, STEP_GOAL_MS)
        headline.append((label, steps, cpu))
    for label, steps, cpu in headline:
        item_17(label, steps, cpu)
    report("replace_lines + diff, 100,000 lines", asyncio.run(big_file_edit()), 100)
    report("coder-tui --help (process wall time)", help_time(), 150)


if __name__ == "__main__":
    main()
