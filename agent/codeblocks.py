"""The files a streamed answer proposes: fenced code blocks that name their path (seed 003's
StreamAgent saves them). A block names its path in its info string (```python src/app.py,
```python title="src/app.py", ```src/app.py) or on the line just before it (`src/app.py`,
**src/app.py**, File: src/app.py, # src/app.py). Blocks without a path are examples, not files.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
PATHLIKE = r"[\w.-]+(?:/[\w.-]+)*\.[\w]+|[\w.-]+(?:/[\w.-]+)+"
TITLE = re.compile(r"""(?:title|file(?:name)?|path)\s*=\s*["']?(?P<path>[^"'\s]+)""")
INFO_PATH = re.compile(rf"^(?:[\w+#-]+[ :])?\s*(?P<path>{PATHLIKE})\s*$")
LEAD = re.compile(rf"^\s*(?:#+\s*|[-*]\s*)?(?:\*\*|`)?(?:(?:file|path)\s*:\s*)?(?:\*\*|`)?(?P<path>{PATHLIKE})"
                  rf"(?:\*\*|`)?\s*:?\s*(?:\*\*|`)?\s*$", re.I)


def named_blocks(text: str) -> list[tuple[str, str]]:
    """(path, content) for each block that names a relative path, in order; a later block for the
    same path replaces the earlier one."""
    found: dict[str, str] = {}
    for match in FENCE.finditer(text):
        path = _path(match.group("info").strip(), _line_before(text, match.start()))
        if path is not None:
            found.pop(path, None)
            found[path] = match.group("body")
    return list(found.items())


def _line_before(text: str, start: int) -> str:
    lines = text[:start].rstrip("\n").rsplit("\n", 1)
    return lines[-1] if lines else ""


def _path(info: str, lead: str) -> str | None:
    for match in (TITLE.search(info), INFO_PATH.match(info), LEAD.match(lead)):
        if match is not None:
            path = match.group("path")
            if not path.startswith(("/", "~")) and ".." not in path.split("/"):
                return path
    return None
