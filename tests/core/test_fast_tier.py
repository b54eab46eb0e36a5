"""The fast tier's guard (tests/fasttier.py): an inner pytest session with a test that takes longer
than the limit without the `slow` mark fails, naming it with its time; marked or quick tests pass."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

pytest_plugins = ["pytester"]

INNER = '''
import time
import pytest

def test_quick():
    assert True

def test_dawdles_unmarked():
    time.sleep(0.4)  # the behaviour under test is a slow test: it must take this long

@pytest.mark.slow
def test_dawdles_but_is_marked():
    time.sleep(0.4)
'''


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.syspath_prepend(str(ROOT))  # `-p tests.fasttier` imports this repository's module
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # and xdist's workers too
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the plugins named (seconds of imports)
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makepyfile(test_inner=INNER)
    return pytester


def _run(inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, limit: str, *args: str) -> pytest.RunResult:
    monkeypatch.setenv("CODER_TUI_FAST_LIMIT", limit)
    return inner.runpytest("-p", "tests.fasttier", "-p", "xdist", "-p", "no:cacheprovider", *args)


def test_an_unmarked_test_over_the_limit_fails_the_run_and_is_named(
        inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(inner, monkeypatch, "0.2", "-n", "0")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=3)  # every test passed: the run fails for the time alone
    out = result.stdout.str()
    assert "1 test(s) not marked slow took longer than 0.2 s (CODER_TUI_FAST_LIMIT)" in out
    offenders = re.findall(r"^\s+(\d+\.\d) s  (\S+)$", out, re.M)
    assert [nodeid for _, nodeid in offenders] == ["test_inner.py::test_dawdles_unmarked"]
    assert float(offenders[0][0]) >= 0.4


def test_within_the_limit_or_turned_off_the_run_passes(inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for limit in ("5", "0"):  # 0 turns the guard off
        result = _run(inner, monkeypatch, limit, "-n", "0")
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        assert "not marked slow" not in result.stdout.str()


def test_a_limit_that_is_not_a_number_is_a_usage_error(inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(inner, monkeypatch, "ten", "-n", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "CODER_TUI_FAST_LIMIT='ten' is not a number of seconds" in result.stderr.str()


def test_the_guard_sees_the_reports_of_xdist_workers(inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(inner, monkeypatch, "0.2", "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    assert re.search(r"^\s+\d+\.\d s  test_inner.py::test_dawdles_unmarked$", result.stdout.str(), re.M)
    assert "test_dawdles_but_is_marked" not in result.stdout.str().split("fast tier")[-1]
