"""The keys a folder's `.env` holds (`OPENAI_API_KEY=sk-…`, as seed 000's setup expects), read only
once the user trusts the folder (agent/config.py): a repository's `.env` could otherwise send your
prompts and code to an account it chooses. Only `*_API_KEY` variables are read; the environment
you started coder-tui with wins over the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent.workspace_input import files

FILE = ".env"
LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def is_key(name: str) -> bool:
    return name.endswith("_API_KEY")


def parse(text: str) -> dict[str, str]:
    """KEY=VALUE lines (`export` allowed, quotes removed, ` # comments` after an unquoted value)."""
    found: dict[str, str] = {}
    for row in text.splitlines():
        match = LINE.match(row)
        if match is None or row.lstrip().startswith("#"):
            continue
        name, value = match.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].strip()
        found[name] = value
    return found


def keys(root: Path) -> tuple[dict[str, str], str | None]:
    """The `*_API_KEY` values of the folder's `.env` (none when missing), and why it cannot be read."""
    try:
        text = files.read_inside(root, FILE)
    except files.OutsideWorkspace as exc:
        return {}, str(exc)
    if text is None:
        return {}, None
    return {name: value for name, value in parse(text).items() if is_key(name) and value}, None
