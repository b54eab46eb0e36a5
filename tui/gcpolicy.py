"""Garbage collection that stays out of the way of typing.

CPython's automatic full collections walk every tracked object; with the UI toolkit and the model
library loaded, and a long conversation on screen, each one pauses the app for 60-300 ms, several
times a minute while an answer streams. So: objects that live as long as the app are frozen
(excluded from collection), young generations are collected automatically as usual, and full
collections run only when the user is not typing.
"""

from __future__ import annotations

import gc
import time

IDLE_INPUT = 1.5  # seconds without a key press before a full collection may run
FULL_EVERY = 20.0  # seconds between full collections, at most
FULL_AT_LATEST = 90.0  # someone typing without pause for this long gets one anyway
GEN2_NEVER = 1 << 30  # automatic full collections: effectively never


class GcPolicy:
    def __init__(self) -> None:
        self.last_input = 0.0
        self.last_full = time.monotonic()
        self.full_collections = 0

    def start(self) -> None:
        """After the first frame: freeze what exists, then collect young objects only."""
        gc.freeze()
        gen0, gen1, _ = gc.get_threshold()
        gc.set_threshold(gen0, gen1, GEN2_NEVER)
        gc.enable()

    def key_pressed(self) -> None:
        self.last_input = time.monotonic()

    def tick(self) -> bool:
        """Run a full collection if the user has paused and one is due; True if it ran."""
        now = time.monotonic()
        overdue = now - self.last_full > FULL_AT_LATEST
        if not overdue and (now - self.last_input < IDLE_INPUT or now - self.last_full < FULL_EVERY):
            return False
        gc.collect()
        _trim_heap()
        self.last_full = time.monotonic()
        self.full_collections += 1
        return True


def _trim_heap() -> None:
    """Give freed heap pages back to the system (glibc keeps them otherwise); elsewhere a no-op."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        ctypes.CDLL(name).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass
