"""`coder-tui acp` on the command line: its help, and what it imports."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.core.test_imports import _loaded


def test_help_explains_the_command_and_imports_nothing_heavy(isolated_home: Path) -> None:
    done = run_cli(isolated_home, "acp", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "Agent Client Protocol" in text and "agent_servers" in text and "stdout carries only the protocol" in text
    assert "--mode {plan,ask,allow}" in done.stdout and "--api-base URL" in done.stdout
    code = "from tui import cli\ntry:\n    cli.main(['acp', '--help'])\nexcept SystemExit:\n    pass"
    assert _loaded(code) == []
    assert "coder-tui acp" in run_cli(isolated_home, "--help").stdout


def test_the_acp_front_end_loads_no_ui_and_not_litellm_on_import() -> None:
    assert _loaded("import agent.frontends.acp") == []
