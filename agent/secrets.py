"""Keep secrets out of events, session files, logs and error messages.

Every secret the process learns (API keys, GitHub and OCT tokens) is registered here; text that
leaves the process through those channels passes through `redact`. Well-known token shapes are
masked even when they were never registered.
"""

from __future__ import annotations

import re
import threading

MASK = "[redacted]"
_PATTERNS = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abpr]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,})"
)

_lock = threading.Lock()
_values: list[str] = []


def register(value: str | None) -> None:
    """Remember a secret value so that it is masked wherever it would appear."""
    if not value or len(value) < 6:
        return
    with _lock:
        if value not in _values:
            _values.append(value)
            _values.sort(key=len, reverse=True)


def redact(text: str) -> str:
    for value in _values:
        if value in text:
            text = text.replace(value, MASK)
    return _PATTERNS.sub(MASK, text)


def contains_secret(text: str) -> bool:
    return any(value in text for value in _values) or _PATTERNS.search(text) is not None
