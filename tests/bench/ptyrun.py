"""Run a terminal program in a pseudo-terminal and time what it paints (for the TUI benchmarks)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Sequence

ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[@-Z\\-_])")


class PtyProgram:
    """A child process on the slave side of a pty of a given size; we hold the master."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], size: tuple[int, int] = (120, 36),
                 cwd: str | None = None) -> None:
        self.master, slave = os.openpty()
        cols, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.raw = bytearray()
        self.plain = bytearray()  # the output without escape sequences, for finding text
        self._carry = b""  # an escape sequence cut off at the end of the last read

    def read(self, timeout: float) -> bool:
        """Read what is there within timeout; False when the program closed the terminal."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        self.raw.extend(chunk)
        data, self._carry = self._carry + chunk, b""
        last = data.rfind(b"\x1b")
        if last >= 0 and not ANSI.match(data, last) and len(data) - last < 256:
            data, self._carry = data[:last], data[last:]
        self.plain.extend(ANSI.sub(b"", data))
        return True

    def wait_for(self, text: bytes, timeout: float = 30.0, after: int = 0) -> float:
        """Seconds since start until `text` appears in the plain output (searched from `after`)."""
        deadline = time.perf_counter() + timeout
        while text not in self.plain[after:]:
            if time.perf_counter() > deadline or not self.read(0.05):
                tail = bytes(self.plain[-400:]).decode("utf-8", "replace")
                raise TimeoutError(f"{text!r} did not appear; last output: {tail!r}")
        return time.perf_counter() - self.started

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        os.close(self.master)
