"""The first model call never blocks the event loop on imports, nor a long history on its preparation."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import asyncio, sys, time
sys.path.insert(0, {root!r})
from tests.fakellm import FakeLLM, Reply
from agent.llm import LLM

async def main():
    lags = []
    async def ticker():
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - started - 0.01)
    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)  # the ticker is running before the first call starts
    with FakeLLM(Reply(text="hello")) as server:
        reply = await LLM(server.model, server.url, "sk-test-000000").complete(
            [{{"role": "user", "content": "hi"}}], [], lambda s: None, lambda *a: None)
    tick.cancel()
    print(reply.text, round(max(lags), 3))

asyncio.run(main())
"""


def test_cold_first_call_keeps_the_loop_responsive() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE.format(root=str(ROOT))], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out[0] == "hello"
    # The built-in client imports httpx on its first request (tens of milliseconds); importing
    # litellm and the OpenAI SDK on the loop stalled it for 1-4 s.
    assert float(out[1]) < 1.5, f"event loop blocked for {out[1]} s during the first model call"


LONG_HISTORY_PROBE = """
import asyncio, sys, time
sys.path.insert(0, {root!r})
from tests.fakellm import FakeLLM, Reply
from agent.llm import LLM
history = []
for turn in range(3000):
    history.append({{"role": "user", "content": f"question {{turn}} " * 3}})
    history.append({{"role": "assistant", "content": f"answer {{turn}} " * 4}})

async def main():
    lags, texts = [], []
    async def ticker():
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - started - 0.005)
    with FakeLLM(Reply(text="hello there, streamed in pieces", chunk_size=4)) as server:
        model = LLM(server.model, server.url, "sk-test-000000")
        tick = asyncio.create_task(ticker())
        started = time.perf_counter()
        reply = await model.complete(history, [], texts.append, lambda *a: None)
        took = time.perf_counter() - started
        tick.cancel()
    print(reply.text == "".join(texts), round(max(lags), 3), round(took, 3))

asyncio.run(main())
"""


def test_a_long_history_does_not_stall_the_callers_loop() -> None:
    # A request of 6,000 messages is prepared and streamed on the caller's loop by the built-in
    # client: the loop (a UI, a room) keeps ticking, and the streamed text reaches the caller in order.
    out = subprocess.run([sys.executable, "-c", LONG_HISTORY_PROBE.format(root=str(ROOT))], capture_output=True,
                         text=True, check=True, timeout=180).stdout.split()
    assert out[0] == "True"
    assert float(out[1]) < max(0.25, float(out[2]) / 3), f"loop stalled {out[1]} s in a {out[2]} s request"


WIND_DOWN = """
import asyncio
from agent.llm.requestloop import _RequestLoop

async def request():
    try:
        await asyncio.sleep(3600)
    finally:
        print("request wound down", flush=True)

async def main():
    asyncio.run_coroutine_threadsafe(request(), _RequestLoop.get().loop)
    await asyncio.sleep(0.2)

asyncio.run(main())
"""


def test_requests_still_running_at_exit_are_wound_down() -> None:
    """A request thread left running into interpreter shutdown can hang the process forever
    (frozen while it holds an import lock); at exit its work is cancelled and awaited instead."""
    done = subprocess.run([sys.executable, "-c", WIND_DOWN], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "request wound down" in done.stdout


def test_run_starts_loading_litellm_before_it_imports_the_agent_core(tmp_path, isolated_home) -> None:
    """`coder-tui run` with a model on the litellm path (here by CODER_TUI_MODEL_PATH=litellm, which
    gate_env sets) loads litellm in a thread from launch (agent/llm/preload.py), overlapping the
    agent core's imports, the config and the workspace, instead of after them. Here the front end's
    import waits until litellm's has started: before the fix the run never got that far."""
    from tests.conftest import TEST_KEY, cli_env
    from tests.fake_anthropic import FakeAnthropic
    from tests.fakellm import Reply
    from tests.import_gate import gate_env

    (tmp_path / "ws").mkdir()
    env = cli_env(isolated_home, **gate_env(tmp_path / "hook", wait_for_litellm=("agent.frontends.headless",)))
    with FakeAnthropic(Reply(text="hello")) as fake:
        done = subprocess.run([sys.executable, "-m", "tui.cli", "run", "hi", "--workspace", str(tmp_path / "ws"),
                               "--model", fake.model, "--api-base", fake.url, "--api-key", TEST_KEY],
                              env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "hello" in done.stdout
