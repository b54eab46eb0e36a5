"""Paths as people read them: under the home folder, `~/...`."""

from __future__ import annotations

from pathlib import Path


def home_relative(path: Path | str) -> str:
    path = Path(path)
    try:
        return f"~/{path.relative_to(Path.home())}"
    except ValueError:
        return str(path)
