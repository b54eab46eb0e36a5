"""Exec tools: bash_exec (one command) and persistent shells (shell_open/exec/close; shell_send for
a shell opened on a terminal of its own, agent/tools/ptyshell.py).

Commands run in the workspace folder, in their own process group (killed as a whole on timeout
or cancellation), with only allow-listed environment variables (`sandbox.command_env`), and in
the bubblewrap sandbox when it applies (agent/tools/sandbox.py). Our own process environment, which
a command could read through /proc/$PPID/environ, no longer shows the secrets either (see
`secrets.hide_from_proc`, done when the config is loaded, and `sandbox.protect_process`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from agent.secrets import SECRET_NAME
from agent.tools import sandbox
from agent.tools.base import Proposal, Tool, ToolArgs, ToolContext, ToolError
from agent.workspaces.base import Workspace

NETWORK_HELP = ("True only when the command needs the network (installing packages, downloading); "
                "the user is asked to allow it. Otherwise commands run without network access.")
STREAM_CAP = 30_000
MAX_SHELLS = 5
KILL_GRACE = 2.0


def child_env(ctx: ToolContext | None = None, sandboxed: bool = False) -> dict[str, str]:
    """The environment of a command: the allow-listed variables, never one named like a secret."""
    env = sandbox.command_env(ctx, sandboxed)
    return {k: v for k, v in env.items() if not SECRET_NAME.search(k)}


def default_shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def cap(text: str, limit: int = STREAM_CAP) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-limit // 3 :]
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters cut …]\n{tail}"


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after a grace period."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, KILL_GRACE)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            async with asyncio.timeout(wait):
                await asyncio.shield(proc.wait())
            if sig == signal.SIGKILL:
                return
        except TimeoutError:
            continue


async def _drain(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        if len(sink) < STREAM_CAP * 8:
            sink.extend(chunk)


def _exec_available(workspace: Workspace) -> bool:
    return workspace.can_exec and workspace.root is not None


class BashExecArgs(ToolArgs):
    command: str = Field(description="The bash command line to run in the workspace folder.")
    timeout: int = Field(default=60, ge=1, le=600, description="Seconds before the command is killed.")
    network: bool = Field(default=False, description=NETWORK_HELP)


def _summary(text: str, network: bool) -> str:
    return f"{text}  (asks for network access)" if network else text


class BashExec(Tool):
    name = "bash_exec"
    description = (
        "Run one bash command in the workspace folder and return its exit code, stdout and stderr "
        "(each capped). The command has no terminal and no stdin; it is killed after `timeout` seconds."
    )
    Args = BashExecArgs
    examples = ({"command": "python -m pytest -q tests/test_util.py"}, {"command": "git status --short"})
    kind = "exec"

    def available(self, workspace: Workspace) -> bool:
        return _exec_available(workspace)

    async def prepare(self, args: BashExecArgs, ctx: ToolContext) -> Proposal:
        root = str(ctx.workspace.root)
        return Proposal(summary=_summary(args.command, args.network), command=args.command, cwd=root,
                        timeout=args.timeout)

    async def run(self, args: BashExecArgs, ctx: ToolContext) -> str:
        await sandbox.ready(ctx)
        network = sandbox.wants_network(ctx, self.name, args.command, args.network)
        argv, sandboxed = sandbox.wrap(ctx, [default_shell(), "-c", args.command], network)
        note = sandbox.network_note(args.network, network) if sandboxed else ""
        if sandboxed:
            sandbox.begin(ctx)
        try:
            output = await self._run(ctx, argv, sandboxed, args)
        finally:
            if sandboxed:
                note += await asyncio.shield(sandbox.end(ctx))
        return note + output

    async def _run(self, ctx: ToolContext, argv: list[str], sandboxed: bool, args: BashExecArgs) -> str:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(ctx.workspace.root), env=child_env(ctx, sandboxed),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )
        out, err = bytearray(), bytearray()
        readers = asyncio.gather(_drain(proc.stdout, out), _drain(proc.stderr, err))
        timed_out = False
        try:
            async with asyncio.timeout(args.timeout):
                await proc.wait()
        except TimeoutError:
            timed_out = True
            await kill_group(proc)
        except asyncio.CancelledError:
            await kill_group(proc)
            readers.cancel()
            raise
        try:
            async with asyncio.timeout(5):  # grandchildren may hold the pipes open
                await readers
        except TimeoutError:
            readers.cancel()
        status = (f"timed out after {args.timeout} s; the command's process group was killed"
                  if timed_out else f"exit code: {proc.returncode}")
        return _format(status, out, err)


def _format(status: str, out: bytes, err: bytes) -> str:
    parts = [status]
    for label, data in (("stdout", out), ("stderr", err)):
        text = data.decode("utf-8", errors="replace").removesuffix("\n")
        if text:
            parts.append(f"--- {label} ---\n{cap(text)}")
    if len(parts) == 1:
        parts.append("(no output)")
    return "\n".join(parts)


@dataclass
class ShellSession:
    id: str
    program: str
    proc: asyncio.subprocess.Process
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    sandbox_done: Any = None  # when sandboxed: what to call once it is closed (agent/tools/sandbox.py `end`)

    async def run(self, command: str, timeout: int) -> tuple[str, int | None]:
        """Run a command in the shell; (output, exit code); exit code None on timeout."""
        marker = f"__coder_tui_{uuid.uuid4().hex}__"
        script = f"{{ {command}\n}} < /dev/null 2>&1\nprintf '\\n{marker} %s\\n' \"$?\"\n"
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(script.encode())
        await self.proc.stdin.drain()
        output = bytearray()
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            async with asyncio.timeout_at(deadline):
                line = await self.proc.stdout.readline()
            if not line:
                raise ToolError(f"shell {self.id} exited; open a new one with shell_open")
            if line.startswith(marker.encode()):
                code = int(line.split()[1])
                text = output.decode("utf-8", errors="replace")
                return text[:-1] if text.endswith("\n") else text, code
            if len(output) < STREAM_CAP * 8:
                output.extend(line)

    async def close(self) -> None:
        if self.proc.returncode is None:
            await kill_group(self.proc)


class ShellManager:
    def __init__(self) -> None:
        self.sessions: dict[str, Any] = {}  # ShellSession, or PtyShell (agent/tools/ptyshell.py)
        self._counter = 0

    async def open(self, program: str, cwd: Path, wrap: Any = None, env: dict[str, str] | None = None,
                   size: tuple[int, int] | None = None) -> Any:
        """Start `program` in `cwd`; `wrap` turns its argv into the argv to run (the sandbox);
        `size` (rows, cols): on a terminal of its own."""
        if len(self.sessions) >= MAX_SHELLS:
            raise ToolError(f"{MAX_SHELLS} shells are open already; close one with shell_close")
        argv = [program] + (["--noprofile", "--norc"] if Path(program).name == "bash" else [])
        argv = wrap(argv) if wrap is not None else argv
        if size is not None:
            from agent.tools.ptyshell import open_pty

            self._counter += 1
            shell = await open_pty(f"sh{self._counter}", program, argv, str(cwd), env or child_env(), *size)
            self.sessions[shell.id] = shell
            return shell
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=str(cwd), env=child_env() if env is None else env, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"cannot start {program}: {exc.strerror}") from None
        self._counter += 1
        session = ShellSession(f"sh{self._counter}", program, proc)
        self.sessions[session.id] = session
        return session

    def get(self, session_id: str) -> Any:
        if session_id not in self.sessions:
            known = ", ".join(self.sessions) or "none open"
            raise ToolError(f"no shell {session_id!r} (open shells: {known}); use shell_open first")
        return self.sessions[session_id]

    async def close(self, session_id: str) -> None:
        session = self.get(session_id)
        del self.sessions[session_id]
        try:
            await session.close()
        finally:
            if session.sandbox_done is not None:
                await asyncio.shield(session.sandbox_done())

    async def close_all(self) -> None:
        for session_id in list(self.sessions):
            await self.close(session_id)


def shells(ctx: ToolContext) -> ShellManager:
    manager: Any = ctx.extras.get("shells")
    if manager is None:
        manager = ctx.extras["shells"] = ShellManager()
    return manager


class ShellOpenArgs(ToolArgs):
    command: str | None = Field(default=None, description="Shell program to start (default: bash, else /bin/sh).")
    network: bool = Field(default=False, description="True only when commands in this shell need the network; "
                                                     "the user is asked to allow it.")
    pty: bool = Field(default=True, description="The shell has a terminal of its own (interactive programs, "
                                                "colours, prompts; type into it with shell_send). false: none.")
    rows: int = Field(default=24, ge=5, le=200, description="With pty: the terminal's height.")
    cols: int = Field(default=80, ge=20, le=500, description="With pty: the terminal's width.")


class ShellOpen(Tool):
    name = "shell_open"
    description = (
        "Open a persistent shell on a terminal of its own (rows x cols) in the workspace folder; later "
        "shell_exec calls run commands in it to their end and keep its current folder and variables; "
        "shell_send types keys into it for interactive programs and reads its output. Returns the session_id."
    )
    Args = ShellOpenArgs
    kind = "exec"

    def available(self, workspace: Workspace) -> bool:
        return _exec_available(workspace)

    async def prepare(self, args: ShellOpenArgs, ctx: ToolContext) -> Proposal:
        program = args.command or default_shell()
        what = f"open a {args.rows}x{args.cols} terminal shell" if args.pty else "open a shell"
        return Proposal(summary=_summary(f"{what}: {program}", args.network), command=program,
                        cwd=str(ctx.workspace.root))

    async def run(self, args: ShellOpenArgs, ctx: ToolContext) -> str:
        program = shutil.which(args.command) if args.command else default_shell()
        if not program:
            raise ToolError(f"shell program {args.command!r} was not found")
        if args.pty:
            from agent.tools.ptyshell import available

            if (why := available()) and "pty" in args.model_fields_set:
                raise ToolError(why)
            args.pty = why is None  # by default a terminal where the system has them
        await sandbox.ready(ctx)
        network = sandbox.wants_network(ctx, self.name, args.command or "", args.network)
        sandboxed = sandbox.wrap(ctx, ["true"], network)[1]  # says once when there is no sandbox

        def wrap(argv: list[str]) -> list[str]:
            return sandbox.wrap(ctx, argv, network)[0]

        if sandboxed:
            sandbox.begin(ctx)
        try:
            session = await shells(ctx).open(program, ctx.workspace.root, wrap,  # type: ignore[arg-type]
                                             env=child_env(ctx, sandboxed), size=(args.rows, args.cols) if args.pty else None)
        except BaseException:
            if sandboxed:
                await asyncio.shield(sandbox.end(ctx))
            raise
        if sandboxed:
            session.sandbox_done = lambda: sandbox.end(ctx)  # the shell's sandbox ends when it is closed
        note = sandbox.network_note(args.network, network) if sandboxed else ""
        opened = f"{note}session_id: {session.id} ({session.program}, in {ctx.workspace.root})"
        if args.pty:
            return f"{opened}, a {args.rows}x{args.cols} terminal; type into it with shell_send\n{await session.send('', 3.0)}"
        return opened


class ShellExecArgs(ToolArgs):
    session_id: str = Field(description="A session_id returned by shell_open.")
    command: str = Field(description="Command line to run in that shell.")
    timeout: int = Field(default=60, ge=1, le=600, description="Seconds before the shell is killed.")


class ShellExec(Tool):
    name = "shell_exec"
    description = "Run a command in a persistent shell opened with shell_open; returns output and exit code."
    Args = ShellExecArgs
    kind = "exec"

    def available(self, workspace: Workspace) -> bool:
        return _exec_available(workspace)

    async def prepare(self, args: ShellExecArgs, ctx: ToolContext) -> Proposal:
        return Proposal(summary=f"[{args.session_id}] {args.command}", command=args.command,
                        cwd=f"shell {args.session_id}", timeout=args.timeout)

    async def run(self, args: ShellExecArgs, ctx: ToolContext) -> str:
        manager = shells(ctx)
        session = manager.get(args.session_id)
        async with session.lock:
            try:
                output, code = await session.run(args.command, args.timeout)
            except TimeoutError:
                await manager.close(args.session_id)
                raise ToolError(f"timed out after {args.timeout} s; shell {args.session_id} was killed "
                                "(open a new one with shell_open)") from None
            except asyncio.CancelledError:
                await manager.close(args.session_id)
                raise
        note = await sandbox.end(ctx, ended=False) if session.sandbox_done is not None else ""
        return f"{note}exit code: {code}\n{cap(output) if output else '(no output)'}"


class ShellCloseArgs(ToolArgs):
    session_id: str = Field(description="The shell to close.")


class ShellClose(Tool):
    """Always allowed: it only stops a shell the agent itself opened."""

    name = "shell_close"
    description = "Close a persistent shell opened with shell_open."
    Args = ShellCloseArgs

    def available(self, workspace: Workspace) -> bool:
        return _exec_available(workspace)

    async def run(self, args: ShellCloseArgs, ctx: ToolContext) -> str:
        await shells(ctx).close(args.session_id)
        return f"shell {args.session_id} closed"


class ShellSendArgs(ToolArgs):
    session_id: str = Field(description="A session_id returned by shell_open.")
    keys: str = Field(default="", description="Text to type; named keys in angle brackets: <enter>, <tab>, <esc>, "
                                              "<backspace>, <up>, <down>, <left>, <right>, <ctrl-c>, <ctrl-d>, "
                                              "<lt> for '<'. Empty: only read what the terminal printed.")
    wait: float = Field(default=2.0, ge=0, le=60, description="Seconds to wait for output to settle before reading.")


class ShellSend(Tool):
    name = "shell_send"
    description = ("Type keys into a terminal shell (shell_open) and return what it printed since the "
                   "last read (colours removed). Never answers a password prompt: the user does that.")
    Args = ShellSendArgs
    examples = ({"session_id": "sh1", "keys": "python3<enter>"}, {"session_id": "sh1", "keys": "<ctrl-c>"})
    kind = "exec"

    def available(self, workspace: Workspace) -> bool:
        return _exec_available(workspace)

    async def prepare(self, args: ShellSendArgs, ctx: ToolContext) -> Proposal:
        return Proposal(summary=f"[{args.session_id}] type: {args.keys or '(read only)'}", command=args.keys,
                        cwd=f"shell {args.session_id}")

    async def run(self, args: ShellSendArgs, ctx: ToolContext) -> str:
        from agent.tools.ptyshell import PtyShell

        session = shells(ctx).get(args.session_id)
        if not isinstance(session, PtyShell):
            raise ToolError(f"shell {args.session_id} has no terminal: use shell_exec, or shell_open with pty=true")
        async with session.lock:
            shown = cap(await session.send(args.keys, args.wait))
        return (await sandbox.end(ctx, ended=False) if session.sandbox_done is not None else "") + shown


SHELL_TOOLS: list[type[Tool]] = [BashExec, ShellOpen, ShellExec, ShellClose, ShellSend]
