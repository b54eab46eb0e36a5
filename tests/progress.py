"""A progress line while the suite runs: how many tests are done of how many, the time so far,
failures, and the tests running now with how long they have run.

With `-q` and two xdist workers the suite prints a dot per test, and nothing at all while both
workers sit in tests of a minute (a CLI cold start, Node, mypy): it looked stalled for minutes.
A line comes at the first test event after each PERIOD seconds (so at least once per slowest
test; `CODER_TUI_TEST_PROGRESS=SECONDS` changes the period). tests/conftest.py hands pytest these hooks; they run in the process that reports (the
xdist controller, or the only process with `-n 0`).
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

PERIOD = float(os.environ.get("CODER_TUI_TEST_PROGRESS", "30"))  # seconds between progress lines


class Progress:
    def __init__(self) -> None:
        self.start = self.last = time.monotonic()
        self.total = 0
        self.done = 0
        self.failed: set[str] = set()
        self.running: dict[str, float] = {}  # node id -> when it started

    def line(self, now: float) -> str:
        total = f"/{self.total}" if self.total else ""
        failed = f" · {len(self.failed)} failed" if self.failed else ""
        running = ", ".join(f"{nodeid} ({now - began:.0f} s)" for nodeid, began in sorted(
            self.running.items(), key=lambda item: item[1])[:2])
        return (f"[progress] {self.done}{total} tests in {_duration(now - self.start)}{failed}"
                + (f" · running: {running}" if running else ""))


def _duration(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


_progress = Progress()
_config: dict[str, pytest.Config] = {}


def remember(config: pytest.Config) -> None:
    """From tests/conftest.py's pytest_configure: where the lines go."""
    _config["config"] = config


def _say_if_due() -> None:
    config = _config.get("config")
    now = time.monotonic()
    if config is None or hasattr(config, "workerinput") or now - _progress.last < PERIOD:
        return  # an xdist worker's output is not shown
    _progress.last = now
    writer = config.get_terminal_writer()
    if writer.width_of_current_line:  # after the dots of `-q`
        writer.line()
    writer.line(_progress.line(now))


def pytest_collection_finish(session: pytest.Session) -> None:
    _progress.total = _progress.total or len(session.items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    _progress.total = len(ids)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _progress.running[nodeid] = time.monotonic()
    _say_if_due()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed:
        _progress.failed.add(report.nodeid)
    # done at its call (or a setup that failed or skipped): pytest reports a test's teardown only
    # once the next test is known, which under xdist may be long after
    if (report.when == "call" or (report.when == "setup" and not report.passed)) and \
            _progress.running.pop(report.nodeid, None) is not None:
        _progress.done += 1
    _say_if_due()
