"""A cold `run` of a model on the litellm path says on the terminal that it is loading the model
library, and erases it; one on a built-in client has nothing to load and says nothing."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from agent.frontends.waitline import ERASE, LOADING, said_while_waiting
from tests.bench.ptyrun import PtyProgram
from tests.conftest import cli, cli_env, write_files
from tests.fakellm import FakeLLM, Reply

# The line shows while litellm loads: a fork of the warm CLI has it loaded already.
pytestmark = pytest.mark.cold_cli


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def _until_written(stream: io.StringIO) -> None:
    for _ in range(1000):
        if stream.getvalue():
            return
        await asyncio.sleep(0)
    raise AssertionError("nothing was written")


async def test_a_wait_that_lasts_is_said_then_erased() -> None:
    terminal = Terminal()
    async with said_while_waiting(terminal, "loading…", delay=0):
        await _until_written(terminal)
        assert terminal.getvalue() == "loading…"
    assert terminal.getvalue() == "loading…" + ERASE


async def test_a_short_wait_and_a_stream_that_is_not_a_terminal_say_nothing() -> None:
    terminal, piped = Terminal(), io.StringIO()
    async with said_while_waiting(terminal, "loading…", delay=30):
        await asyncio.sleep(0)
    async with said_while_waiting(piped, "loading…", delay=0):
        for _ in range(20):
            await asyncio.sleep(0)
    assert terminal.getvalue() == "" and piped.getvalue() == ""


def cold_run(fake_llm: FakeLLM, tmp_path: Path, home: Path, **env: str) -> bytes:
    ws = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    fake_llm.script(Reply(text="Hello there."))
    argv = cli("run", "say hi", "--workspace", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url,
               "--api-key", "sk-test-waitline-000", "--mode", "allow")
    program = PtyProgram(argv, cli_env(home, **env), cwd=str(ws))
    try:
        program.wait_for(b"answered", timeout=120)
        assert program.proc.wait(timeout=60) == 0
    finally:
        program.close()
    raw = bytes(program.raw)
    assert b"Hello there." in raw
    return raw


def test_a_cold_run_on_a_terminal_says_it_loads_the_model_library_and_erases_it(
        fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    raw = cold_run(fake_llm, tmp_path, isolated_home, CODER_TUI_MODEL_PATH="litellm")
    loading, erased, banner = (raw.find(text) for text in (LOADING.encode(), ERASE.encode(), b"coder-tui \xc2\xb7 "))
    assert 0 <= loading < erased < banner, raw[:600]
    assert raw.count(LOADING.encode()) == 1


def test_a_cold_run_on_a_built_in_client_has_nothing_to_load(fake_llm: FakeLLM, tmp_path: Path,
                                                             isolated_home: Path) -> None:
    raw = cold_run(fake_llm, tmp_path, isolated_home)
    assert LOADING.encode() not in raw and raw.find(b"coder-tui \xc2\xb7 ") >= 0
