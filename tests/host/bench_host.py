"""The cost of the session host, against the scripted model (not collected by pytest):

    python -m tests.host.bench_host [RUNS]

Prints, in a private temporary home and runtime folder:
- attaching: connect + open a live session + its replay, until the first line (in-process client);
- a turn through a warm host: prompt to `run_started` and to `turn_done` (protocol level);
- `coder-tui run --attach new` wall time with the host cold (started on demand) and warm, beside
  `coder-tui run` in-process (which imports the model library each time).
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

from tests.conftest import TEST_KEY, cli_env, write_files
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import stop_started_host


def _ms(seconds: list[float]) -> str:
    return f"median {statistics.median(seconds) * 1000:,.0f} ms (min {min(seconds) * 1000:,.0f}, n={len(seconds)})"


async def _protocol(llm: FakeLLM, ws: Path, runs: int) -> tuple[list[float], list[float], list[float]]:
    from agent.host.client import HostClient

    attach, first, turn = [], [], []
    options = {"workspace": str(ws), "model": llm.model, "api_base": llm.url, "api_key": TEST_KEY, "mode": "allow"}
    owner = await HostClient.connect_or_start()
    opened = await owner.request("open", session="new", client="bench", options=options)
    for _ in range(runs):
        start = time.perf_counter()
        await owner.request("prompt", text="hello")
        while (line := await owner.lines.get()) is not None and line["type"] != "turn_done":
            if line["type"] == "run_started":
                first.append(time.perf_counter() - start)
        turn.append(time.perf_counter() - start)
        start = time.perf_counter()
        late = await HostClient.connect()
        await late.request("open", session=opened["session_id"], client="late", options={})
        await late.lines.get()
        attach.append(time.perf_counter() - start)
        await late.close()
    await owner.close()
    return attach, first, turn


def _wall(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:5])} failed: {done.stderr.strip()[-300:]}")
    return time.perf_counter() - start


def main(runs: int = 3) -> None:
    home = Path(tempfile.mkdtemp(prefix="hb"))
    runtime = Path(tempfile.mkdtemp(prefix="hr"))
    ws = write_files(home / "ws", {"a.py": "x = 1\n"})
    env = cli_env(home, XDG_RUNTIME_DIR=str(runtime), CODER_TUI_HOST_IDLE="120")
    os.environ.update({k: env[k] for k in ("XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")})
    with FakeLLM(responder=lambda body: Reply(text="Hello.")) as llm:
        flags = ["--workspace", str(ws), "--model", llm.model, "--api-base", llm.url, "--api-key", TEST_KEY,
                 "--mode", "allow", "--json"]
        python = [sys.executable, "-m", "tui.cli", "run"]
        try:
            cold = _wall([*python, "--attach", "new", "hello", *flags], env)
            warm = [_wall([*python, "--attach", "new", "hello", *flags], env) for _ in range(runs)]
            alone = [_wall([*python, "hello", *flags], env) for _ in range(runs)]
            attach, first, turn = asyncio.run(_protocol(llm, ws, runs))
        finally:
            stop_started_host(runtime / "coder-tui" / "host.lock")
    print(f"attach to a live session, to its first line: {_ms(attach)}")
    print(f"a turn through the warm host: prompt -> run_started {_ms(first)}; -> turn_done {_ms(turn)}")
    print(f"run --attach new, host cold (started on demand): {cold * 1000:,.0f} ms")
    print(f"run --attach new, host warm: {_ms(warm)}")
    print(f"run in-process (imports the model library): {_ms(alone)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
