"""Where coder-tui keeps things (platformdirs; XDG variables are honoured on Linux).

Sessions, checkpoints and caches hold the user's code and conversations: the folders that hold
them are private to the user (0700) and the files in them 0600 (see `private_dir`, `open_private`).
"""

from __future__ import annotations

import os
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


def private_dir(path: Path) -> Path:
    """Create `path` readable by the user only; coder-tui's own folders above it become 0700 too."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    roots = [data_dir(), cache_dir(), config_dir()]
    for folder in (path, *path.parents):
        if folder != path and not any(folder.is_relative_to(root) for root in roots):
            break
        try:
            if folder.stat().st_mode & 0o077:
                os.chmod(folder, 0o700)
        except OSError:  # not ours to change (e.g. a shared parent): nothing to tighten
            continue
    return path


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    """A file descriptor on `path`, created 0600 (an existing file is made 0600)."""
    fd = os.open(path, flags, 0o600)
    if os.fstat(fd).st_mode & 0o077:
        os.fchmod(fd, 0o600)
    return fd
