"""The fast tier's guard: a run fails when a test not marked `slow` takes longer than the fast tier
allows, naming each such test with its time.

`pytest -m "not slow"` is the quick loop; a test that takes half a minute without the mark
(tests/marks.py finds most of them by what they call, the lists there add the rest) makes that
loop slow for everyone, and nothing said so. This plugin records the call time of every test
without the `slow` mark and, at the end of the session, fails the run (exit code 1) with the
list of offenders when one took longer than `CODER_TUI_FAST_LIMIT` seconds (default 10: a busy
2-core CI machine runs a 1-second test several times slower; `0` turns the guard off). Only the
call counts, not fixtures. It runs where reports are gathered (the xdist controller, or the only
process with `-n 0`); tests/conftest.py installs it, and `-p tests.fasttier` does in any other
pytest session.
"""

from __future__ import annotations

import os

import pytest

LIMIT_VAR = "CODER_TUI_FAST_LIMIT"
DEFAULT_LIMIT = 10.0
PLUGIN_NAME = "coder-tui-fast-tier"


def limit_from_env() -> float:
    """The limit in seconds; a value that is not a number is a usage error, said as such."""
    raw = os.environ.get(LIMIT_VAR, "").strip()
    if not raw:
        return DEFAULT_LIMIT
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError(f"{LIMIT_VAR}={raw!r} is not a number of seconds (0 turns the guard off)") from None
    if value < 0:
        raise pytest.UsageError(f"{LIMIT_VAR}={raw!r} is negative: give seconds, or 0 to turn the guard off")
    return value


class FastTierGuard:
    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.offenders: dict[str, float] = {}  # node id -> call seconds

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and "slow" not in report.keywords and report.duration > self.limit:
            self.offenders[report.nodeid] = report.duration

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.offenders and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.offenders:
            return
        terminalreporter.section("fast tier", sep="=", red=True, bold=True)
        terminalreporter.line(f"{len(self.offenders)} test(s) not marked slow took longer than {self.limit:g} s "
                              f"({LIMIT_VAR}); mark them in tests/marks.py or make them faster:")
        for nodeid, seconds in sorted(self.offenders.items(), key=lambda item: -item[1]):
            terminalreporter.line(f"  {seconds:6.1f} s  {nodeid}")


def install(config: pytest.Config) -> None:
    """Registers the guard once, in the process that gathers reports (not in an xdist worker)."""
    if hasattr(config, "workerinput") or config.pluginmanager.has_plugin(PLUGIN_NAME):
        return
    limit = limit_from_env()
    if limit > 0:
        config.pluginmanager.register(FastTierGuard(limit), PLUGIN_NAME)


def pytest_configure(config: pytest.Config) -> None:
    """When loaded with `-p tests.fasttier` (tests/conftest.py calls install itself)."""
    install(config)
