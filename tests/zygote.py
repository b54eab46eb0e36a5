"""A warm `coder-tui` for the CLI tests: one process imports litellm and the app once, then forks.

A cold `python -m tui.cli` spends about 4 s of CPU importing litellm (and what its first request
imports) before it does anything; the CLI tests start some 200 of them. The zygote imports all
that once per test session (`agent.llm.preload.prewarm()`, every `agent` module, `tui.cli`) and forks a
child per CLI invocation. `cli()` in tests/conftest.py then names tests/zygote_client.py, a small
stdlib-only process that stands in for the CLI:

- it passes its stdin/stdout/stderr (the descriptors themselves), argv, environment and folder
  to the zygote, whose child takes them over and runs `tui.cli` as `python -m tui.cli` would
  (`__main__`, sys.argv, sys.path[0], SystemExit codes, uncaught exceptions, atexit, a death by
  an uncaught KeyboardInterrupt);
- signals sent to the client (SIGINT, SIGTERM, ...) are forwarded to the child; the client ends
  with the child's exit status (or the same signal); a client killed with SIGKILL has its child
  killed, and that child is reaped before the zygote forks anyone else;
- anything the interpreter or an import reads from the environment at start (PYTHON*, LITELLM*,
  locale, PATH, proxies, ...) must equal the zygote's, and no descriptor may be a terminal;
  otherwise the client execs a real cold `python -m tui.cli`. So does it when no zygote runs.

What a fork cannot reproduce: the child's pid is not the client's, and /proc/<child>/environ
and cmdline are the zygote's. Tests that look at either run cold (`cold_cli` marker, see
tests/conftest.py), as do tests that measure imports (they start their own interpreters).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import pkgutil
import runpy
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
from typing import Any

# Read by the interpreter or an import at start: a request whose value differs runs cold.
STARTUP_EXACT = ("PATH", "LANG", "LANGUAGE", "TERM", "COLUMNS", "LINES", "TZ", "HOME")
STARTUP_PREFIXES = ("PYTHON", "LITELLM", "LC_", "GIT_PYTHON", "HTTP_PROXY", "HTTPS_PROXY",
                    "ALL_PROXY", "NO_PROXY", "SSL_", "REQUESTS_CA", "CURL_CA", "AIOHTTP", "OPENAI_LOG")
# Imported by the model call, the GitHub and room paths and the map, beyond every agent module.
EXTRA_MODULES = ("openai.resources", "git", "mcp", "httpx", "aiohttp", "pycrdt", "socketio", "msgpack",
                 "cryptography", "tree_sitter_language_pack", "acp", "github", "html2text", "tomli_w")


XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
READY_TIMEOUT = 300  # seconds: its imports take about 5 s of CPU, many more on a busy machine


# Set to "True" by agent.llm itself before litellm is imported (in the zygote too), so a test
# process that loaded litellm in-process carries it without changing what a CLI run imports.
SET_BY_US = ("LITELLM_LOCAL_MODEL_COST_MAP",)


def startup_vars(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items()
            if (k in STARTUP_EXACT or k.upper().startswith(STARTUP_PREFIXES)) and k not in SET_BY_US}


def preload() -> None:
    """Import what a CLI run imports: litellm as the app loads it, every agent module, tui.cli."""
    from agent.llm.preload import prewarm

    prewarm()  # for the CLI tests of litellm-path models (the built-in clients never import it)
    import agent

    for info in pkgutil.walk_packages(agent.__path__, "agent."):
        importlib.import_module(info.name)
    importlib.import_module("tui.cli")
    for name in EXTRA_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # Textual reads the environment at import (textual.constants); the app imports it itself.
    assert "textual" not in sys.modules, "the zygote must not import textual"
    assert threading.active_count() == 1, f"threads before fork: {threading.enumerate()}"


def _read_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
    if len(data) < 4:
        raise ConnectionError("short request")
    size = struct.unpack("!I", data[:4])[0]
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("request cut short")
        body += chunk
    return json.loads(body), list(fds)


def _exit_status(exc: SystemExit) -> int:
    """What the interpreter makes of an uncaught SystemExit."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run_cli(argv: list[str], cwd: str) -> None:
    """In the child: `python -m tui.cli ARGV` from here on, ended with os._exit (never returns)."""
    import tui

    sys.argv = [os.path.join(os.path.dirname(tui.__file__), "cli.py"), *argv]
    # As in `python -m tui.cli`, the module runs as __main__ and `tui.cli` is not imported yet.
    sys.modules.pop("tui.cli", None)
    with contextlib.suppress(AttributeError):
        delattr(tui, "cli")
    sys.path[0] = cwd
    status, interrupted = 0, False
    try:
        runpy.run_module("tui.cli", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        status = _exit_status(exc)
    except KeyboardInterrupt:
        traceback.print_exc()
        status, interrupted = 130, True
    except BaseException:  # noqa: BLE001 - the interpreter prints it and exits 1
        sys.excepthook(*sys.exc_info())
        status = 1
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]  # non-daemon threads, as at exit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - as the interpreter: a lost stdout is status 120
            status = 120
    if interrupted:  # an uncaught KeyboardInterrupt ends the process by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


class Zygote:
    def __init__(self, path: str, own_env: dict[str, str]) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "reap")
        self.selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")  # EOF: pytest is gone
        self.children: dict[socket.socket, int] = {}
        self.conns: dict[int, socket.socket] = {}
        self.own_env = own_env  # as it was before the imports (load_litellm sets a variable)

    def serve(self) -> None:
        while True:
            events = self.selector.select()
            kinds: dict[str, list[Any]] = {"conn": [], "reap": [], "accept": [], "parent": []}
            for key, _ in events:
                kinds["conn" if isinstance(key.data, int) else key.data].append(key.fileobj)
            if kinds["parent"] and not os.read(sys.stdin.fileno(), 1024):
                self.shutdown()
                return
            for conn in kinds["conn"]:  # a client that died has its child killed before any fork
                self.from_client(conn)
            self.reap()
            if kinds["accept"]:
                self.accept()

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        fds: list[int] = []
        try:
            conn.settimeout(30)
            request, fds = _read_request(conn)
            conn.settimeout(None)
            why = self.cold_because(request, fds)
            if why:
                conn.sendall(f"cold {why}\n".encode())
                conn.close()
                return
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                self.become(request, fds)
            self.children[conn] = pid
            self.conns[pid] = conn
            self.selector.register(conn, selectors.EVENT_READ, pid)
            conn.sendall(f"pid {pid}\n".encode())
        except (OSError, ValueError, ConnectionError) as exc:
            print(f"zygote: a request failed: {exc!r}", file=sys.stderr, flush=True)
            with contextlib.suppress(OSError):
                conn.sendall(b"cold zygote error\n")
            conn.close()
        finally:
            for fd in fds:
                os.close(fd)

    def cold_because(self, request: dict[str, Any], fds: list[int]) -> str | None:
        if len(fds) != 3:
            return "descriptors missing"
        if any(os.isatty(fd) for fd in fds):
            return "a terminal"
        theirs = startup_vars(request["env"])
        if theirs != self.own_env:
            differ = sorted(set(theirs.items()) ^ set(self.own_env.items()))
            return "environment differs: " + ",".join(sorted({k for k, _ in differ}))
        return None

    def become(self, request: dict[str, Any], fds: list[int]) -> None:
        """In the child: drop the zygote's state, take the client's descriptors, run the CLI."""
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            self.selector.close()
            self.listener.close()
            for conn in (*self.children, *self.conns.values()):
                conn.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            tempfile.tempdir = None  # found again from this environment's TMPDIR when first asked
        except BaseException:  # noqa: BLE001 - nothing to run: say why where someone reads it
            traceback.print_exc()
            os._exit(70)
        _run_cli(request["argv"], request["cwd"])

    def from_client(self, conn: socket.socket) -> None:
        pid = self.children.get(conn)
        if pid is None:
            return
        try:
            data = conn.recv(4096)
        except OSError:
            data = b""
        if not data:  # the client is gone (killed): so is its child, reaped now
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            self.forget(pid)
            return
        for line in data.decode().split():
            if line.isdigit():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, int(line))

    def reap(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self.wake_r, 4096):
                pass
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.conns.get(pid)
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.sendall(f"exit {status}\n".encode())
                self.forget(pid)

    def forget(self, pid: int) -> None:
        conn = self.conns.pop(pid, None)
        if conn is not None:
            self.children.pop(conn, None)
            self.selector.unregister(conn)
            conn.close()

    def shutdown(self) -> None:
        for pid in list(self.conns):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.reap()


class WarmCli:
    """The test session's zygote, started by the first CLI command of a test that allows it.

    `allowed` is set per test (tests/conftest.py); `socket()` is None for a cold command: not
    allowed, CODER_TUI_TEST_WARM unset (the default: CI runs every command cold), or the zygote
    failed to start (said once on stderr).
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.env: dict[str, str] = {}  # the zygote's environment (set once the session starts)
        self.allowed = False
        self._path: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._failed = not os.environ.get("CODER_TUI_TEST_WARM")
        self._ready = False
        self._lock = threading.Lock()

    def socket(self) -> str | None:
        if not self.allowed or self._failed:
            return None
        with self._lock:
            if not self._ready:
                self.start()
                self._wait()
        return None if self._failed else self._path

    def start(self) -> None:
        """Start the zygote (its imports go on while the first tests run); socket() waits for it."""
        if self._proc is not None or self._failed:
            return
        self._folder = tempfile.mkdtemp(prefix="coder-tui-zygote-")
        self._path = os.path.join(self._folder, "socket")
        env = {**self.env, **{v: os.path.join(self._folder, v.lower()) for v in XDG}}
        with open(os.path.join(self._folder, "log"), "wb") as log:
            self._proc = subprocess.Popen([sys.executable, "-m", "tests.zygote", self._path], cwd=self.root,
                                          env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)

    def _wait(self) -> None:
        if self._proc is None:
            return
        assert self._proc.stdout is not None
        self._ready = True
        with selectors.DefaultSelector() as waiting:
            waiting.register(self._proc.stdout, selectors.EVENT_READ)
            ready = waiting.select(READY_TIMEOUT) and self._proc.stdout.readline() == b"ready\n"
        if not ready:
            self._failed = True
            self._proc.kill()
            self._proc.wait()
            with open(os.path.join(self._folder, "log"), "rb") as log:
                why = log.read().decode(errors="replace")[-2000:]
            print(f"\nthe CLI zygote did not start; CLI tests run cold:\n{why}", file=sys.stderr)

    def stop(self) -> None:
        if self._proc is None:
            return
        assert self._proc.stdin is not None
        self._proc.stdin.close()  # its EOF ends the zygote
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        shutil.rmtree(self._folder, ignore_errors=True)
        self._proc, self._ready = None, False


def main(path: str) -> None:
    own_env = startup_vars(dict(os.environ))
    preload()
    zygote = Zygote(path, own_env)
    print("ready", flush=True)
    zygote.serve()


if __name__ == "__main__":
    main(sys.argv[1])
