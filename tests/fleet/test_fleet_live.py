"""Which session needs you, fleet included (issue 39: "the app's live-sessions view shows the
batch"): `coder-tui sessions --live` and the app's `/live` list the unfinished batches of this
user's broker, and say which wait for an approval; nothing is asked of Redis without a broker."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.fleet.model import BatchSpec
from agent.fleet.store import FleetStore
from tests.conftest import run_cli
from tests.fleet.conftest import NO_REDIS, RedisServer, free_port


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.skip(NO_REDIS)
    server = RedisServer(tmp_path).start()
    try:
        yield server
    finally:
        server.stop()


def batches(server: RedisServer) -> None:
    """b-wait: one job parked on an approval, one running; b-done: every job ended."""
    store = FleetStore(server.client())
    for batch, prompt in (("bwait001", "bump the linter"), ("bdone001", "fix the typo")):
        store.create(BatchSpec(id=batch, prompt=prompt, jobs=2, created=time.time()),
                     [("octo/r1", "github"), ("octo/r2", "github")])
    store.update("bwait001", 1, state="parked")
    store.update("bwait001", 2, state="running")
    store.update("bdone001", 1, state="done")
    store.update("bdone001", 2, state="failed")


def test_sessions_live_lists_the_unfinished_batches_and_which_waits_for_you(
        isolated_home: Path, broker: RedisServer) -> None:
    batches(broker)
    done = run_cli(isolated_home, "sessions", "--live", CODER_TUI_FLEET_BROKER=broker.url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Fleet batches:" in lines, done.stdout
    row = next(text for text in lines if "bwait001" in text)
    assert row.startswith("⏸ ") and "1 running" in row and "1 waiting for approval" in row and "bump the linter" in row
    assert "waiting for you: 1 approval(s) (`coder-tui fleet approve bwait001`)" in done.stdout
    assert "bdone001" not in done.stdout  # every job of it ended: nothing to watch


def test_without_a_broker_nothing_is_said_of_the_fleet_and_an_unreachable_one_says_so(isolated_home: Path) -> None:
    quiet = run_cli(isolated_home, "sessions", "--live")
    assert quiet.returncode == 0 and "fleet" not in quiet.stdout.lower(), quiet.stdout
    down = run_cli(isolated_home, "sessions", "--live", CODER_TUI_FLEET_BROKER=f"redis://127.0.0.1:{free_port()}/0")
    assert down.returncode == 0, down.stderr
    assert "fleet: cannot reach the fleet broker at redis://127.0.0.1:" in down.stdout

