"""SSE benchmark: `coder-tui serve` from request to the first `content` event and to `done`.

Run: python tests/bench/bench_serve.py   (or python -m tests.bench for every benchmark)
Goal (issue 14): under 20 ms of our own overhead above the model's own time.

Three processes, as in use: the scripted model server (answers every request with streamed
text at once), `coder-tui serve` (allow mode, a temp folder) and this client (httpx). The model's
own time is measured by streaming the same kind of answer from the scripted server directly;
our overhead is a turn's time minus that. A turn in a new session includes opening the session
(its record, the system prompt); a continued turn is the next message of the same session.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
TURNS = 40
GOAL_MS = 20.0
TOKEN = "bench-token"


def start(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, *args], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def turn(client: httpx.Client, session_id: str | None) -> tuple[float, float, str]:
    """(seconds to the first content event, seconds to done, session id) of one streamed turn."""
    body: dict[str, object] = {"messages": [{"role": "user", "content": "say done"}]}
    if session_id:
        body["session_id"] = session_id
    started = time.perf_counter()
    first = 0.0
    with client.stream("POST", "/api/chat", json=body) as response:
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            data = json.loads(line[6:])
            if "session_id" in data:
                session_id = data["session_id"]
            if "content" in data and not first:
                first = time.perf_counter() - started
            if data.get("done"):
                return first, time.perf_counter() - started, session_id or ""
    raise RuntimeError("the stream ended without done")


def model_only(model: httpx.Client) -> tuple[float, float]:
    """The scripted model's own time for one streamed answer (a kept-alive connection, as litellm
    keeps one): first text chunk, end of stream."""
    body = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": "say done"}]}
    started = time.perf_counter()
    first = 0.0
    with model.stream("POST", "/chat/completions", json=body) as response:
        for line in response.iter_lines():
            if '"content": "done"' in line and not first:
                first = time.perf_counter() - started
    return first, time.perf_counter() - started


async def agent_only(url: str, data: str, root: str) -> dict[str, list[tuple[float, float]]]:
    """The same turns through AgentSession in this process, without the server: what the core takes."""
    from pydantic import SecretStr

    from agent.approval import QueueApprover
    from agent.config import Config
    from agent.events import TextDelta
    from agent.session.core import AgentSession
    from agent.session.record import SessionStore
    from agent.workspaces.local import LocalWorkspace

    config = Config(model="openai/fake-model", api_base=url, api_key=SecretStr("sk-bench"), mode="allow")
    store = SessionStore(Path(data) / "agent-only")
    marks: list[float] = []

    def sink(event: object) -> None:
        if isinstance(event, TextDelta) and not marks:
            marks.append(time.perf_counter())

    async def one(session: AgentSession) -> tuple[float, float]:
        marks.clear()
        started = time.perf_counter()
        await session.run("say done")
        return marks[0] - started, time.perf_counter() - started

    results: dict[str, list[tuple[float, float]]] = {"new session": [], "continued session": []}
    kept = AgentSession.open(config, LocalWorkspace(root), QueueApprover(), sink, store=store)
    for index in range(TURNS + 3):
        started = time.perf_counter()
        fresh = AgentSession.open(config, LocalWorkspace(root), QueueApprover(), sink, store=store)
        first, done = await one(fresh)
        opened = time.perf_counter() - started - done
        await fresh.close()
        continued = await one(kept)
        if index >= 3:  # the first turns warm litellm up
            results["new session"].append((first + opened, done + opened))
            results["continued session"].append(continued)
    await kept.close()
    return results


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def p90_ms(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9) - 1] * 1000


def measure(url: str, serve_url: str) -> dict[str, list[tuple[float, float]]]:
    results: dict[str, list[tuple[float, float]]] = {"model": [], "new session": [], "continued session": []}
    with httpx.Client(base_url=serve_url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as client, \
            httpx.Client(base_url=url, timeout=30) as model:
        session_id = ""
        for _ in range(3):  # warm up: litellm's import and first connection
            session_id = turn(client, None)[2]
            model_only(model)
        for _ in range(TURNS):
            results["model"].append(model_only(model))
            results["new session"].append(turn(client, None)[:2])
            results["continued session"].append(turn(client, session_id)[:2])
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CONFIG_HOME=f"{tmp}/config", XDG_DATA_HOME=f"{tmp}/data",
                   XDG_CACHE_HOME=f"{tmp}/cache")
        (Path(tmp) / "ws").mkdir()
        llm, url = start(["-m", "tests.fakellm", "0"], env)
        serve, banner = start(["-m", "tui.cli", "serve", f"{tmp}/ws", "--port", "0", "--mode", "allow", "--token",
                               TOKEN, "--model", "openai/fake-model", "--api-base", url, "--api-key", "sk-bench"], env)
        try:
            results = measure(url, banner.split()[-1])
            core = asyncio.run(agent_only(url, f"{tmp}/data", f"{tmp}/ws"))
        finally:
            serve.send_signal(2)
            serve.wait(30)
            llm.kill()
            llm.wait()
    report(results, core)


def report(results: dict[str, list[tuple[float, float]]], core: dict[str, list[tuple[float, float]]]) -> None:
    model_first = median_ms([r[0] for r in results["model"]])
    model_done = median_ms([r[1] for r in results["model"]])
    print(f"model alone (scripted server): first text {model_first:6.2f} ms   end {model_done:6.2f} ms   n={TURNS}")
    for name in ("new session", "continued session"):
        first = [r[0] for r in results[name]]
        done = [r[1] for r in results[name]]
        overhead = median_ms(done) - model_done
        verdict = "ok" if overhead < GOAL_MS else "OVER GOAL"
        print(f"serve, {name:<18} first content median {median_ms(first):6.2f} ms (p90 {p90_ms(first):6.2f})   "
              f"done median {median_ms(done):6.2f} ms (p90 {p90_ms(done):6.2f})   "
              f"overhead to first content {median_ms(first) - model_first:6.2f} ms, to done {overhead:6.2f} ms  "
              f"goal < {GOAL_MS:g} ms  {verdict}")
        core_done = median_ms([r[1] for r in core[name]])
        print(f"  of which AgentSession alone (in process, no server): first text "
              f"{median_ms([r[0] for r in core[name]]):6.2f} ms, done {core_done:6.2f} ms; "
              f"the server's own share of the turn: {median_ms(done) - core_done:6.2f} ms")


if __name__ == "__main__":
    main()
