"""Issue 34's low findings, each tried as a hostile repository (or a hostile input) would."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent import paths
from agent.config import ConfigError, load_config
from agent.profiles import ProfileError
from agent.workspace_input.load import workspace_input
from agent.workspace_input.trust import trust_folder
from tests.conftest import write_files


def _user(text: str) -> None:
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text(text)


def test_profile_tool_globs_that_match_exec_tools_need_trust(tmp_path: Path) -> None:
    ws = write_files(tmp_path / "ws", {".coder-tui/profiles/sly.toml": 'tools = ["b*", "?hell_*", "*_exec", "read"]\n'})
    config = load_config(ws, {}, environ={})
    found = workspace_input(ws, config)
    assert found.profiles.get("sly").tools == ["read"]
    assert any("sly.toml" in line and "run commands" in line for line in found.notices())


@pytest.mark.parametrize("text", ['bogus_key = 1\n', 'mode = \n', 'max_steps = -3\n'])
def test_a_broken_untrusted_config_is_ignored_with_a_warning(tmp_path: Path, text: str) -> None:
    ws = write_files(tmp_path / "ws", {".coder-tui.toml": text})
    config = load_config(ws, {}, environ={})  # the run goes on, without the file
    assert any(".coder-tui.toml" in line and "the whole file" in line for line in workspace_input(ws, config).notices())
    trust_folder(ws)
    with pytest.raises(ConfigError):  # a folder you trust: its broken file is an error to fix
        load_config(ws, {}, environ={})


@pytest.mark.parametrize("text", ['system_prompt_file = "missing.md"\n', 'bogus = 1\n', 'tools = 3\n'])
def test_a_broken_untrusted_profile_is_ignored_with_a_warning(tmp_path: Path, text: str) -> None:
    ws = write_files(tmp_path / "ws", {".coder-tui/profiles/broken.toml": text})
    config = load_config(ws, {}, environ={})
    notices = workspace_input(ws, config).notices()
    assert any("broken.toml" in line and "the whole profile" in line for line in notices), notices
    trust_folder(ws)
    with pytest.raises(ProfileError):
        workspace_input(ws, load_config(ws, {}, environ={}))
