"""Config layering: flags > environment > workspace .coder-tui.toml > user config.toml."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent import paths
from agent.config import ConfigError, load_config, save_user_settings


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_layers_override_in_order(tmp_path: Path) -> None:
    _write(paths.user_config_file(), 'model = "user/m"\nmode = "plan"\nmax_steps = 7\n')
    _write(tmp_path / ".coder-tui.toml", 'model = "ws/m"\napi_base = "http://ws"\n')
    config = load_config(tmp_path, {}, environ={}, trust=True)
    assert (config.model, config.mode, config.max_steps, config.api_base) == ("ws/m", "plan", 7, "http://ws")
    config = load_config(tmp_path, {}, environ={"CODER_TUI_MODEL": "env/m", "CODER_TUI_MODE": "allow"})
    assert (config.model, config.mode, config.sources["model"]) == ("env/m", "allow", "environment")
    config = load_config(tmp_path, {"model": "flag/m", "mode": None}, environ={"CODER_TUI_MODEL": "env/m"})
    assert (config.model, config.sources["model"]) == ("flag/m", "command line")


def test_provider_variable_outranks_a_key_in_a_file(tmp_path: Path) -> None:
    _write(tmp_path / ".coder-tui.toml", 'model = "openai/gpt-4.1"\napi_key = "sk-from-file-000000"\n')
    assert load_config(tmp_path, {}, environ={}, trust=True).api_key.get_secret_value() == "sk-from-file-000000"
    config = load_config(tmp_path, {}, environ={"OPENAI_API_KEY": "sk-env"})
    assert config.api_key is None and config.sources["api_key"] == "OPENAI_API_KEY"
    config = load_config(tmp_path, {"api_key": "sk-flag-000000"}, environ={"OPENAI_API_KEY": "sk-env"})
    assert config.api_key.get_secret_value() == "sk-flag-000000"


def test_a_provider_key_alone_picks_a_default_model(tmp_path: Path) -> None:
    config = load_config(tmp_path, {}, environ={"ANTHROPIC_API_KEY": "x"})
    assert config.model.startswith("anthropic/") and config.sources["model"] == "default for ANTHROPIC_API_KEY"
    with pytest.raises(ConfigError, match="no model configured"):
        load_config(tmp_path, {}, environ={}).require_model()


@pytest.mark.parametrize("text, message", [
    ("model = ", "is not valid TOML"),
    ('mode = "yolo"\n', "key `mode`: Input should be 'plan', 'ask' or 'allow'"),
    ("max_steps = 0\n", "key `max_steps`: Input should be greater than or equal to 1"),
    ('colour = "red"\n', "key `colour`: Extra inputs are not permitted"),
    ("[tools.bash_exec]\ntimeout = 0\n", "key `tools.bash_exec.timeout`: Input should be greater than or equal to 1"),
    ("[tools.bash_exec]\ntimout = 5\n", "key `tools.bash_exec.timout`: Extra inputs are not permitted"),
])
def test_bad_files_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    """A folder you trust: its broken file stops the run (an untrusted one's is skipped with a warning,
    tests/security/test_trust_lows.py)."""
    _write(tmp_path / ".coder-tui.toml", text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        load_config(tmp_path, {}, environ={}, trust=True)
    assert ".coder-tui.toml" in str(info.value)


def test_saving_a_key_makes_the_file_private() -> None:
    path = save_user_settings({"model": "openai/x", "api_key": "sk-saved-000000"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    save_user_settings({"theme": "light"})
    config = load_config(None, {}, environ={})
    assert (config.model, config.theme, config.api_key.get_secret_value()) == ("openai/x", "light", "sk-saved-000000")
