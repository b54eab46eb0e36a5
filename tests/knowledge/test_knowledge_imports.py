"""The new commands' --help stays light: no UI toolkit, litellm or tree-sitter before the work."""

from __future__ import annotations

import pytest

from tests.core.test_imports import _loaded


@pytest.mark.parametrize("command", ["map", "explore", "tasks"])
def test_help_of_the_knowledge_commands_imports_nothing_heavy(command: str) -> None:
    code = f"from tui import cli\ntry:\n    cli.main([{command!r}, '--help'])\nexcept SystemExit:\n    pass"
    probe = code + "\nimport sys\nassert 'tree_sitter' not in sys.modules and 'agent.frontends.knowledge' not in sys.modules"
    assert _loaded(probe) == []  # the probe itself fails when tree-sitter or the command module loaded
