"""Import hygiene: agent never pulls in the UI; --help and --version stay light."""

from __future__ import annotations

import subprocess
import sys

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
