"""The slow marks (tests/marks.py): found through helpers and fixtures, and the lists name real tests."""

from __future__ import annotations

import fnmatch
import importlib
import re
from types import SimpleNamespace
from typing import Any

from tests.conftest import ROOT
from tests.marks import COLD_CLI, SLOW_MODULES, SLOW_PARAMS, SLOW_TESTS, is_slow, starts_a_process

EXAMPLES = '''
from tests.conftest import run_cli

def helper(home):
    return run_cli(home, "--version")

def through_a_helper(home):
    assert helper(home).returncode == 0

def imported_inside(home):
    from tests.conftest import cli
    return cli("--version")

def probe():
    import subprocess, sys
    return subprocess.run([sys.executable, "-c", "pass"])

def with_node():
    import subprocess
    return subprocess.run(["node", "client.mjs"])

def in_process():
    from tui import cli
    return cli.main(["--version"])
'''


def examples() -> dict[str, Any]:
    scope: dict[str, Any] = {"__name__": "tests.examples"}
    exec(compile(EXAMPLES, "examples", "exec"), scope)  # noqa: S102 - our own text
    return scope


def test_a_test_that_starts_a_process_is_found_through_its_helpers() -> None:
    scope = examples()
    for name in ("helper", "through_a_helper", "imported_inside", "probe", "with_node"):
        assert starts_a_process(scope[name]), name
    assert not starts_a_process(scope["in_process"])  # tui.cli's main called in-process: fast


def test_every_listed_test_and_module_exists() -> None:
    for entry in SLOW_TESTS | COLD_CLI | set(SLOW_PARAMS):
        path, name = entry.split("::")
        source = (ROOT / path).read_text() if (ROOT / path).is_file() else ""
        assert re.search(rf"^(async )?def {name}\(", source, re.M), f"tests/marks.py lists {entry}, which does not exist"
    for path in SLOW_MODULES:
        assert (ROOT / path).is_file(), f"tests/marks.py lists {path}, which does not exist"


def test_every_listed_parametrisation_exists() -> None:
    for entry, patterns in SLOW_PARAMS.items():
        path, name = entry.split("::")
        test = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)
        ids = [str(value) for mark in getattr(test, "pytestmark", []) if mark.name == "parametrize"
               for value in mark.args[1]]
        for pattern in patterns:
            assert fnmatch.filter(ids, pattern), f"tests/marks.py lists {entry}[{pattern}], which matches no parameter"


def test_only_the_listed_parametrisations_are_slow() -> None:
    def item(name: str, param: str) -> Any:
        return SimpleNamespace(nodeid=f"tests/core/test_modes.py::{name}[{param}]", originalname=name,
                               name=f"{name}[{param}]", callspec=SimpleNamespace(id=param), function=None)

    assert is_slow(item("test_allow_mode_runs_without_asking", "lsp_hover"))
    assert is_slow(item("test_plan_mode_blocks_every_change", "lsp_references"))
    assert not is_slow(item("test_allow_mode_runs_without_asking", "read_file"))
    assert not is_slow(item("test_plan_mode_blocks_every_change", "lsp_rename"))  # blocked before a server starts
