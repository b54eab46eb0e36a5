"""Three subagents started in one step: wall time of the step in parallel (max_subagents = 3) and
one at a time (max_subagents = 1).

Run: python tests/bench/bench_subagents.py   (or python -m tests.bench for every benchmark)
The parent is a real session on a temporary folder; its model (the scripted server on loopback)
answers the parent at once with three `agent` calls, and each child's one turn after DELAY
seconds, a stand-in for a real model's latency. The wall time runs from the prompt to the
parent's answer. Goal: in parallel, close to one child's turn, not the sum of three.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fakellm import FakeLLM, Reply, call  # noqa: E402
from tests.subagents.common import ByAsker  # noqa: E402

DELAY = 1.0
TASKS = ("alpha", "beta", "gamma")


def script() -> ByAsker:
    replies = {name: [Reply(text=f"{name} report", delay=DELAY)] for name in TASKS}
    parent = [Reply(tool_calls=[call("agent", task=f"{name} look around") for name in TASKS]),
              Reply(text="all reported")]
    return ByAsker({"parent": parent, **replies})


async def step(llm: FakeLLM, folder: Path, parallel: int) -> float:
    from pydantic import SecretStr

    from agent.approval import ScriptedApprover
    from agent.config import Config
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts
    from agent.session.target import Target
    from agent.workspaces.local import LocalWorkspace

    llm.responder = script()
    config = Config(model=llm.model, api_base=llm.url, api_key=SecretStr("sk-bench"), mode="allow",
                    max_subagents=parallel, max_retries=0)  # type: ignore[arg-type]
    session = open_session(Target(LocalWorkspace(folder)), config, SessionPorts(ScriptedApprover([]), lambda e: None))
    try:
        started = time.perf_counter()
        complete = await session.run("split the work")
        elapsed = time.perf_counter() - started
    finally:
        await session.close()
    if complete.final_response != "all reported":
        raise SystemExit(f"the step failed: {complete.final_response}")
    return elapsed


async def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for name, value in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache")):
            os.environ[name] = str(Path(scratch) / value)
        os.environ.update(CODER_TUI_HOST="off", CODER_TUI_LSP="off")
        folder = Path(scratch) / "ws"
        folder.mkdir()
        with FakeLLM() as llm:
            await step(llm, folder, 3)  # warm: imports, the first connection
            parallel = await step(llm, folder, 3)
            sequential = await step(llm, folder, 1)
    print(f"3 subagents, {DELAY:.0f} s model turn each: parallel {parallel:.2f} s, "
          f"one at a time {sequential:.2f} s ({sequential / parallel:.1f}x)")


if __name__ == "__main__":
    asyncio.run(main())
