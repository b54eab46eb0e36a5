"""The layering rule (import-linter contracts in pyproject.toml) holds, and breaks when broken.

The core never imports a front end or tui; front ends never import each other, only the helpers
they share; front ends never import tui; every module in agent/frontends is classified; the core's
floors (front ends, session, planning, ... workspaces, GitHub and OCT clients, base modules) import
downwards only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.core.test_imports import ui_imports

CORE = "The core (every agent module but agent.frontends) never imports a front end or tui"
APART = "Front ends never import each other; the helpers they share never import a front end"
NO_TUI = "Front ends never import the Textual app (tui)"
FLOORS = "The core's floors import downwards only"
HANDLES = "Front ends and the app reach the session host through agent.client, never its client or wire module"
NO_UI = "The core (agent) never imports Textual or rich"
LINT = "import sys\nfrom importlinter.cli import lint_imports_command\nsys.exit(lint_imports_command())"


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the tree at `root` (its pyproject.toml, its packages first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", LINT, "--no-cache", "--no-logo"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_layering_contracts_hold() -> None:
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert f"Contracts: {len(contracts)} kept, 0 broken." in done.stdout


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pristine copy of the packages and pyproject.toml, copied once for every case."""
    pristine = tmp_path_factory.mktemp("pristine")
    for name in ("agent", "tui"):
        shutil.copytree(ROOT / name, pristine / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", pristine / "pyproject.toml")
    return pristine


def altered(tree: Path, tmp_path: Path, path: str, line: str) -> Path:
    """A copy of the tree with `line` added to the module at `path` (created when missing)."""
    copy = tmp_path / "tree"
    shutil.copytree(tree, copy)
    module = copy / path
    module.write_text((module.read_text() if module.exists() else "") + f"\n{line}\n")
    return copy


@pytest.mark.parametrize("path, line, contract", [
    ("agent/loop.py", "import agent.frontends.printing", CORE),
    ("agent/oct/client.py", "import tui.pathfmt", CORE),
    ("agent/frontends/room.py", "from agent.frontends import headless", APART),
    ("agent/frontends/printing.py", "import agent.frontends.room", APART),
    ("agent/frontends/headless.py", "import tui.pathfmt", NO_TUI),
    ("agent/github/client.py", "import agent.session.core", FLOORS),  # a protocol client drives no session
    ("agent/oct/client.py", "import agent.workspaces.room", FLOORS),
    ("agent/tools/base.py", "import agent.planning.workflow", FLOORS),
    ("agent/planning/talk.py", "import agent.session.open", FLOORS),
    ("agent/frontends/serve/ws.py", "import agent.host.client", HANDLES),  # a handle, not the host's client
    ("tui/prompting.py", "import agent.host.wire", HANDLES),
    ("agent/host/live.py", "import agent.client.hosted", FLOORS),  # the client floor sits above the host
])
def test_a_forbidden_import_breaks_its_contract(tree: Path, tmp_path: Path, path: str, line: str,
                                                contract: str) -> None:
    done = lint(altered(tree, tmp_path, path, line))
    assert done.returncode == 1, done.stdout + done.stderr
    report = " ".join(done.stdout.split())  # the report wraps long names
    assert f"{contract} BROKEN" in report, done.stdout


@pytest.mark.parametrize("path, line, found", [
    ("agent/planning/talk.py", "import rich", "agent.planning.talk imports rich"),
    ("agent/oct/status.py", "import textual.app", "agent.oct.status imports textual"),
])
def test_a_planted_ui_import_in_the_core_fails_both_guards(tree: Path, tmp_path: Path, path: str, line: str,
                                                          found: str) -> None:
    """Both passed before the contract on external packages and the walk of every module."""
    copy = altered(tree, tmp_path, path, line)
    done = lint(copy)
    assert done.returncode == 1 and f"{NO_UI} BROKEN" in " ".join(done.stdout.split()), done.stdout
    assert found in ui_imports(copy)[1]


def test_a_new_module_in_frontends_must_be_classified(tree: Path, tmp_path: Path) -> None:
    done = lint(altered(tree, tmp_path, "agent/frontends/newfront.py", "from agent.session.target import open_target"))
    assert done.returncode == 1
    assert "not listed as layers: - agent.frontends.newfront" in " ".join(done.stdout.split()), done.stdout


def test_serve_and_acp_are_front_ends_once_they_exist(tree: Path, tmp_path: Path) -> None:
    copy = altered(tree, tmp_path, "agent/frontends/serve.py", "from agent.frontends.common import UsageError")
    (copy / "agent/frontends/acp.py").write_text("from agent.frontends.printing import JsonPrinter\n")
    assert lint(copy).returncode == 0
    (copy / "agent/frontends/acp.py").write_text("from agent.frontends import serve\n")
    done = lint(copy)
    assert done.returncode == 1 and "agent.frontends.acp is not allowed to import agent.frontends.serve" in done.stdout
