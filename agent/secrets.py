"""Keep secrets out of events, session files, logs and error messages.

Every secret the process learns (API keys, GitHub and OCT tokens) is registered here; text that
leaves the process through those channels passes through `redact`. Well-known token shapes are
masked even when they were never registered. Streamed text goes through a `StreamRedactor`,
which holds back the end of a chunk while it could be the start of a secret, so that a key split
across chunks is masked too.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable

MASK = "[redacted]"
MIN_LENGTH = 6  # shorter values are not keys, and masking them would garble ordinary text
_PATTERNS = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abpr]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,})"
)
# The trailing word of a chunk that may still grow into one of the shapes above.
_SHAPE_START = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:s|sk|sk-[A-Za-z0-9_\-]*|g|gh|gh[pousr]|gh[pousr]_[A-Za-z0-9]*"
    r"|gi|git|gith|githu|github|github_|github_p|github_pa|github_pat|github_pat_[A-Za-z0-9_]*"
    r"|x|xo|xox|xox[abpr]|xox[abpr]-[A-Za-z0-9\-]*|A|AI|AIz|AIza[0-9A-Za-z_\-]*)$"
)
HOLD_LIMIT = 400  # a token-like run longer than this is let through (after masking) to keep streaming

_lock = threading.Lock()
_values: list[str] = []


def register(value: str | None) -> None:
    """Remember a secret value so that it is masked wherever it would appear, whatever its shape."""
    if not value:
        return
    value = value.strip()
    if len(value) < MIN_LENGTH:
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


def _held_length(text: str) -> int:
    """How much of the end of `text` could be the beginning of a secret."""
    hold = 0
    for value in _values:
        for size in range(min(len(value) - 1, len(text)), hold, -1):
            if text.endswith(value[:size]):
                hold = size
                break
    shape = _SHAPE_START.search(text[-HOLD_LIMIT:])
    if shape is not None and len(shape.group()) < HOLD_LIMIT:
        hold = max(hold, len(shape.group()))
    return hold


class StreamRedactor:
    """Masks secrets in a stream of text chunks, including one split across chunks."""

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.pending = ""

    def feed(self, text: str) -> None:
        buffer = self.pending + text
        for value in _values:
            if value in buffer:
                buffer = buffer.replace(value, MASK)
        # A token shape that reaches the end may go on in the next chunk: it is held, not cut.
        end = len(buffer)
        buffer = _PATTERNS.sub(lambda m: m.group() if m.end() == end and len(m.group()) < HOLD_LIMIT
                               else MASK, buffer)
        keep = _held_length(buffer)
        ready, self.pending = buffer[: len(buffer) - keep], buffer[len(buffer) - keep :]
        if ready:
            self.out(ready)

    def flush(self) -> None:
        if self.pending:
            text, self.pending = redact(self.pending), ""
            self.out(text)


# Variables treated as secrets wherever the product hands its environment on (shell tools too).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)


def hide_from_proc() -> int:
    """Overwrite secrets in the memory that /proc/PID/environ and /proc/PID/cmdline show.

    Any process of the same user (a shell command the model runs, walking up to us through
    $PPID) can read those files; deleting from `os.environ` does not change them. Each secret
    variable is first re-set with putenv (so C code and child processes still see it, from a
    copy outside that memory), then its bytes in the initial block are overwritten; registered
    secrets passed as arguments (--api-key) are overwritten in the argument block. Linux only;
    returns how many values were hidden.
    """
    bounds = _proc_bounds()
    if bounds is None:
        return 0
    import ctypes

    arg_start, arg_end, env_start, env_end = bounds
    hidden = 0
    offset = 0
    for entry in ctypes.string_at(env_start, env_end - env_start).split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and value and SECRET_NAME.search(name.decode("utf-8", "replace")):
            current = os.environb.get(name)
            if current is not None:
                os.putenv(name, current)
            ctypes.memmove(env_start + offset + len(name) + 1, b"*" * len(value), len(value))
            hidden += 1
        offset += len(entry) + 1
    args = ctypes.string_at(arg_start, arg_end - arg_start)
    for value in list(_values):
        secret = value.encode()
        at = args.find(secret)
        while at >= 0:
            ctypes.memmove(arg_start + at, b"*" * len(secret), len(secret))
            hidden += 1
            at = args.find(secret, at + len(secret))
    return hidden


def _proc_bounds() -> tuple[int, int, int, int] | None:
    """arg_start, arg_end, env_start, env_end of this process (fields 48-51 of /proc/self/stat)."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        arg_start, arg_end, env_start, env_end = (int(fields[i]) for i in (45, 46, 47, 48))
    except (OSError, ValueError, IndexError):
        return None
    if 0 < arg_start < arg_end and 0 < env_start < env_end:
        return arg_start, arg_end, env_start, env_end
    return None
