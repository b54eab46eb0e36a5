"""Where coder-tui keeps things (platformdirs; XDG variables are honoured on Linux)."""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP = "coder-tui"


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP))


def user_config_file() -> Path:
    return config_dir() / "config.toml"


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP))


def prompt_history_file() -> Path:
    """The app's prompt history (one JSON line per prompt sent)."""
    return data_dir() / "prompt-history.jsonl"


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def checkpoints_dir() -> Path:
    return data_dir() / "checkpoints"


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP))
