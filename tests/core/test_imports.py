"""Import hygiene: agent never pulls in the UI; --help and --version stay light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

PROBE = """
import sys
{code}
heavy = [m for m in ("textual", "rich", "tui.app", "litellm", "git", "pycrdt") if m in sys.modules]
print(chr(10) + "HEAVY:" + ",".join(heavy))
"""


def _loaded(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(code=code)], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    return [m for m in out.splitlines()[-1].removeprefix("HEAVY:").split(",") if m]


def test_importing_the_agent_core_loads_no_ui() -> None:
    code = ("import agent, agent.session.core, agent.frontends.headless, agent.loop, agent.executor, agent.tools, "
            "agent.workspaces.local, agent.session.record, agent.config, agent.frontends.printing\n"
            "from agent.tools import default_tools; default_tools()")
    loaded = _loaded(code)
    assert "textual" not in loaded and "rich" not in loaded and "tui.app" not in loaded
    assert "litellm" not in loaded  # imported lazily, on the first model call


def test_help_and_version_import_nothing_heavy() -> None:
    for flag in ("--help", "--version"):
        code = f"from tui import cli\ntry:\n    cli.main([{flag!r}])\nexcept SystemExit:\n    pass"
        assert _loaded(code) == []
    code = "from tui import cli\ntry:\n    cli.main(['run', '--help'])\nexcept SystemExit:\n    pass"
    assert _loaded(code) == []


# Imports every agent module (walking the package) and records, for each `import` statement of a
# UI package, the module that ran it: a cached import is seen too, and so is the importer.
WALK = """
import builtins, importlib, json, pkgutil, sys
UI = ("textual", "rich", "tui")
importers = {}
real = builtins.__import__

def watch(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {}).get("__name__", "?")
    if level == 0 and name.partition(".")[0] in UI and importer.partition(".")[0] not in UI:
        importers.setdefault(name.partition(".")[0], set()).add(importer)
    return real(name, globals, locals, fromlist, level)

def fail(name):
    raise

builtins.__import__ = watch
import agent
walked = ["agent"]
for info in pkgutil.walk_packages(agent.__path__, "agent.", onerror=fail):
    importlib.import_module(info.name)
    walked.append(info.name)
print(json.dumps({"walked": walked, "loaded": [m for m in UI if m in sys.modules],
                  "importers": {k: sorted(v) for k, v in importers.items()}}))
"""
# Third-party importers of a UI package tolerated, with the reason.
TOLERATED = {
    "rich": {"httpx._main": "httpx's own command line; `import httpx` loads it (agent.oct.api), nothing runs it"},
}


def ui_imports(root: Path) -> tuple[list[str], list[str]]:
    """(every agent module the walk imported, each UI import not tolerated) in the tree at root."""
    done = subprocess.run([sys.executable, "-c", WALK], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    bad = [f"{importer} imports {ui}" for ui, importers in found["importers"].items() for importer in importers
           if importer not in TOLERATED.get(ui, {})]
    bad += [f"{ui} is loaded, by nothing tolerated" for ui in found["loaded"]
            if not set(found["importers"].get(ui, [])) <= set(TOLERATED.get(ui, {}))]
    return found["walked"], bad


def agent_modules(root: Path) -> set[str]:
    names = {".".join(p.relative_to(root).with_suffix("").parts) for p in (root / "agent").rglob("*.py")}
    return {n.removesuffix(".__init__") for n in names}


def test_importing_every_agent_module_loads_no_ui() -> None:
    walked, bad = ui_imports(ROOT)
    assert set(walked) == agent_modules(ROOT)  # the walk reached every module (no folder without __init__)
    assert bad == []
