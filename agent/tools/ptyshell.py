"""Terminal shells (seed 003): `shell_open` runs the shell on a pseudo-terminal of its own (stdlib
`os.openpty`, Linux and other POSIX systems; `pty: false` for none), `rows` x `cols`, so interactive
programs, colours and prompts behave as in a terminal; `shell_send` types keys into it (named keys
such as `<enter>`, `<ctrl-c>`, `<up>`) and returns what the terminal printed since the last read, and
`shell_exec` runs a command in it to its end and returns its output and exit code.

A password prompt (`Password:`, `[sudo] password for ...:`, a passphrase) is shown in that output and
never answered by the model: while the terminal waits at one, `shell_send` refuses every key but
`<ctrl-c>`/`<esc>` (to cancel it) and says the user must answer in their own terminal. The shell runs
in the same sandbox, environment and process group as the other shells (agent/tools/shell.py).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
import signal
import termios
import uuid
from dataclasses import dataclass, field
from typing import Any

from agent.tools.base import ToolError

TAIL = 4000  # characters of cleaned output kept to see whether a prompt waits
PENDING_CAP = 240_000  # unread output kept (the oldest is dropped beyond it)
SETTLE = 0.3  # seconds without output after which the terminal is read
PASSWORD_PROMPT = re.compile(r"(\[sudo\] password for [^:\n]*:|\b(password|passphrase|passcode)\b[^:\n]{0,60}:)\s*$",
                             re.IGNORECASE)
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x1b[()][A-Za-z0-9]")
NAMED = {"enter": "\r", "return": "\r", "tab": "\t", "esc": "\x1b", "escape": "\x1b", "backspace": "\x7f",
         "space": " ", "up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
         "home": "\x1b[H", "end": "\x1b[F", "delete": "\x1b[3~", "pageup": "\x1b[5~", "pagedown": "\x1b[6~",
         "lt": "<", "gt": ">"}
KEY = re.compile(r"<([a-z][a-z0-9]*(?:-[a-z0-9]+)?)>", re.IGNORECASE)  # any other <name>: an error, not typed
REFUSAL = ("shell {id} is waiting at a password prompt ({prompt!r}): the model never answers passwords. "
           "The user must answer it in their own terminal (run the command there); send <ctrl-c> to cancel it here")


def available() -> str | None:
    """Why a terminal shell cannot be opened here (None: it can)."""
    if os.name != "posix" or not hasattr(os, "openpty"):
        return "terminal shells need a POSIX system with pseudo-terminals (os.openpty); use shell_open without pty"
    return None


def parse_keys(keys: str) -> tuple[bytes, list[str]]:
    """The bytes `keys` types (text as is, `<name>` as that key) and the key names used."""
    out, names, at = [], [], 0
    for match in KEY.finditer(keys):
        out.append(keys[at:match.start()])
        name = match.group(1).lower()
        if name.startswith("ctrl-") and len(name) == 6 and name[5].isalpha():
            out.append(chr(ord(name[5]) - 96))
        elif name in NAMED:
            out.append(NAMED[name])
        else:
            raise ToolError(f"unknown key <{name}>: use <enter>, <tab>, <esc>, <backspace>, <up>/<down>/<left>/"
                            f"<right>, <home>, <end>, <delete>, <pageup>, <pagedown>, <ctrl-a>…<ctrl-z>, <lt> for '<'")
        names.append(name)
        at = match.end()
    out.append(keys[at:])
    return "".join(out).encode(), names


def clean(text: str) -> str:
    """Terminal output as plain text: escape sequences (colours, cursor moves) removed, CR handled."""
    text = ANSI.sub("", text).replace("\r\n", "\n")
    lines = [line.rsplit("\r", 1)[-1] if "\r" in line.rstrip("\r") else line.rstrip("\r") for line in text.split("\n")]
    return "\n".join(lines).replace("\x07", "")


@dataclass
class PtyShell:
    id: str
    program: str
    proc: asyncio.subprocess.Process
    fd: int  # the terminal's master side
    rows: int
    cols: int
    pending: bytearray = field(default_factory=bytearray)
    tail: str = ""
    ended: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    sandbox_done: Any = None  # when sandboxed: what to call once it is closed (agent/tools/sandbox.py `end`)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def start_reading(self) -> None:
        asyncio.get_running_loop().add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the shell and everything on its terminal are gone
            data = b""
        if not data:
            self.ended = True
            asyncio.get_running_loop().remove_reader(self.fd)
        else:
            self.pending.extend(data)
            del self.pending[:-PENDING_CAP]
            self.tail = (self.tail + clean(data.decode("utf-8", errors="replace")))[-TAIL:]
        self._changed.set()

    def prompt(self) -> str | None:
        """The password prompt the terminal waits at, if it does."""
        last = self.tail.rsplit("\n", 1)[-1]
        match = PASSWORD_PROMPT.search(last)
        return last.strip() if match else None

    async def send(self, keys: str, wait: float) -> str:
        """Type `keys` a line at a time: a line that would follow a password prompt is not sent."""
        data, _ = parse_keys(keys)
        if self.ended:
            raise ToolError(f"shell {self.id} has exited; open a new one with shell_open")
        chunks = [chunk for chunk in re.split(rb"(?<=[\r\n\x03])", data) if chunk]
        for index, chunk in enumerate(chunks):
            if index:
                await self._settle(min(wait, 2.0))
            prompt = self.prompt()
            if prompt is not None and chunk.strip(b"\x03\x1b"):  # anything but <ctrl-c>/<esc> would answer it
                refusal = REFUSAL.format(id=self.id, prompt=prompt)
                if index == 0:
                    raise ToolError(refusal)
                return f"{self.read()}\n[{refusal}; the rest of the keys was not sent]"
            os.write(self.fd, chunk)
        await self._settle(wait)
        return self.read()

    async def _settle(self, wait: float) -> None:
        """Until the terminal has been quiet for SETTLE seconds (or `wait` seconds have passed)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not self.ended and loop.time() < deadline:
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(SETTLE, max(0.0, deadline - loop.time())))
            except TimeoutError:
                return

    def read(self) -> str:
        text = clean(self.pending.decode("utf-8", errors="replace"))
        self.pending.clear()
        parts = [text if text else "(no new output)"]
        prompt = self.prompt()
        if prompt is not None:
            parts.append(f"[the terminal asks for a password ({prompt!r}); only the user answers it, in their own "
                         f"terminal: the model must not. Send <ctrl-c> to cancel it.]")
        if self.ended:
            parts.append(f"[shell {self.id} has exited]")
        return "\n".join(parts)

    async def run(self, command: str, timeout: int) -> tuple[str, int | None]:
        """shell_exec here: the command runs in this shell (its folder and variables stay), with its
        input from /dev/null as in a shell without a terminal; (output, exit code). The markers are
        typed split in two, so the terminal's echo of the line never matches them. TimeoutError
        after `timeout` seconds; a password prompt is cancelled and refused (the model never answers)."""
        if self.ended:
            raise ToolError(f"shell {self.id} has exited; open a new one with shell_open")
        if (prompt := self.prompt()) is not None:
            raise ToolError(REFUSAL.format(id=self.id, prompt=prompt))
        tag = uuid.uuid4().hex
        self.pending.clear()  # what it printed before is not this command's (shell_send reads it)
        os.write(self.fd, (f"printf '%s%s\\n' __coder_tui_ {tag}_start__; {{ {command}\n}} < /dev/null; "
                           f"printf '\\n%s%s %s\\n' __coder_tui_ {tag}_end__ \"$?\"\r").encode())
        async with asyncio.timeout(timeout):
            text, code = await self._until_marker(tag)
        start = f"__coder_tui_{tag}_start__\n"
        output = text[text.find(start) + len(start):] if start in text else text
        return (output[:-1] if output.endswith("\n") else output), code

    async def _until_marker(self, tag: str) -> tuple[str, int]:
        """What the terminal printed up to the end marker of `run`, and the exit code it carries."""
        end = re.compile(rf"__coder_tui_{tag}_end__ (\d+)\n")
        while True:
            self._changed.clear()
            text = clean(self.pending.decode("utf-8", errors="replace"))
            if found := end.search(text):
                del self.pending[:]  # the prompt after it is printed again by the next command
                return text[:found.start()], int(found.group(1))
            if self.ended:
                raise ToolError(f"shell {self.id} exited; open a new one with shell_open")
            if (prompt := self.prompt()) is not None:
                os.write(self.fd, b"\x03")
                raise ToolError(f"the command stopped at a password prompt ({prompt!r}), cancelled with Ctrl+C: "
                                "the model never answers passwords; the user runs it in their own terminal")
            await self._changed.wait()

    async def close(self) -> None:
        from agent.tools.shell import kill_group

        if self.proc.returncode is None:
            await kill_group(self.proc)
        if not self.ended:
            asyncio.get_running_loop().remove_reader(self.fd)
            self.ended = True
        os.close(self.fd)


def _as_a_terminal_of_its_own() -> None:
    """In the child, after setsid (start_new_session): the pty becomes its controlling terminal, and
    Ctrl+C and Ctrl+\\ reach what runs in it as in a terminal the user opened, even when this process
    runs with them ignored or blocked (started as `cmd &` by a script, or by a service or editor that
    ignores them: they were inherited, and Ctrl+C never stopped a command). Nothing is imported
    here: a fork's child must not."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())


async def open_pty(shell_id: str, program: str, argv: list[str], cwd: str, env: dict[str, str],
                   rows: int, cols: int) -> PtyShell:
    """Start argv on a new pseudo-terminal of rows x cols, as its session leader and controlling terminal."""
    import struct

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    # HISTFILE empty: an interactive bash would save the agent's commands in the user's history
    env = {**env, "TERM": "xterm-256color", "LINES": str(rows), "COLUMNS": str(cols), "HISTFILE": ""}

    try:
        proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                                                    start_new_session=True, preexec_fn=_as_a_terminal_of_its_own)
    except OSError as exc:
        os.close(master)
        raise ToolError(f"cannot start {program}: {exc.strerror}") from None
    finally:
        os.close(slave)
    shell = PtyShell(shell_id, program, proc, master, rows, cols)
    shell.start_reading()
    return shell


def describe(shell: Any) -> str:
    return f"{shell.rows}x{shell.cols} terminal" if isinstance(shell, PtyShell) else "no terminal"
