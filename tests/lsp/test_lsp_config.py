"""`[lsp.NAME]`: merged with the defaults field by field, layered across config files, refused from
an untrusted workspace file; CODER_TUI_LSP=off turns the servers off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent import paths
from agent.config import load_config
from agent.lsp import for_session
from agent.lsp.servers import configured
from agent.workspaces.local import LocalWorkspace
from agent.workspace_input import trust


def test_a_default_changes_field_by_field_and_new_servers_are_added(tmp_path: Path) -> None:
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text('[lsp.python]\ncommand = ["pylsp"]\n[lsp.typescript]\nenabled = false\n'
                                        '[lsp.rust]\ncommand = ["rust-analyzer"]\npatterns = ["*.rs"]\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".coder-tui.toml").write_text("[lsp.python]\ntimeout = 5\n")
    trust.remember(ws, True)
    specs = {spec.name: spec for spec in configured(load_config(ws, {}, environ={}).lsp)}
    assert sorted(specs) == ["python", "rust"]
    python = specs["python"]
    assert python.candidates == (("pylsp",),) and python.timeout == 5  # the user's command, the folder's timeout
    assert python.patterns == ("*.py", "*.pyi") and python.untrusted_markers == ()  # a command of your own: yours
    assert specs["rust"].serves("src/main.rs") and specs["rust"].language_of("src/main.rs") == "rust"


def test_an_untrusted_workspace_file_starts_no_server_of_its_own(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".coder-tui.toml").write_text('[lsp.python]\ncommand = ["touch", "pwned"]\n')
    config = load_config(ws, {}, environ={})
    assert config.lsp == {}
    assert any(item.setting.startswith("lsp") and "programs the file would start" in item.why
               for item in config.ignored)


async def test_coder_tui_lsp_off_turns_them_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(tmp_path, {}, environ={})
    events: list[Any] = []
    workspace = LocalWorkspace(tmp_path)
    assert for_session(config, workspace, events.append) is not None
    monkeypatch.setenv("CODER_TUI_LSP", "off")
    assert for_session(config, workspace, events.append) is None
