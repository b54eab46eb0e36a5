"""`coder-tui run PROMPT` through a warm session host (issue 22): the client side, kept lean.

When a session host runs, `run` sends it the prompt, its options and this process's environment
(keys and *_BASE_URL are read for this session only) over the host's owner-only socket, then
writes what the host prints for it (agent/frontends/oneshot.py: the same printers, approvals, summary
and exit code as an in-process run), forwarding stdin lines and Ctrl+C. Nothing of the agent core,
pydantic or litellm is imported here: the first byte reaches the host within a bare Python start.

It runs in-process instead (`try_host` returns None) when the user opted out (`--no-host`,
`host = "off"` in config.toml, CODER_TUI_HOST=off), when no host runs (then `start_for_next`
starts one in the background for the next run), or when the host cannot run it as `run` would:
see `STAYS_IN_PROCESS`, and the host's own refusals (another environment, a session that does
not open).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from typing import Any

from agent.hostplace import HostPlaceError, check_dir, socket_path

ENV_SETTING = "CODER_TUI_HOST"
# options the host path does not take: each needs this process (its files, its terminal) or a
# session other than a new one
STAYS_IN_PROCESS = {
    "images": "--image (the files are read here)",
    "resume": "--resume (a recorded session, opened where it ran)",
    "fork": "--fork",
    "github": "--github", "clone": "--clone", "issue": "--issue", "no_publish": "--no-publish",
    "trust": "--trust (it writes your config)",
}


def setting(args: Any) -> str:
    """`auto` or `off`: --no-host, then CODER_TUI_HOST, then `host` in the user's config.toml."""
    if getattr(args, "no_host", False):
        return "off"
    value = os.environ.get(ENV_SETTING)
    if value:
        return "off" if value.strip().lower() == "off" else "auto"
    return _config_setting()


def _config_setting() -> str:
    """`host` of the user's config file (a file that cannot be read: `off`, so that the in-process
    run reports it as it always has)."""
    import tomllib

    from agent.paths import user_config_file

    try:
        data = tomllib.loads(user_config_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "auto"
    except (OSError, ValueError):
        return "off"
    return "off" if data.get("host") == "off" else "auto"


def stays_in_process(args: Any) -> str | None:
    """Why this `run` cannot go through the host (None: it can)."""
    for name, why in STAYS_IN_PROCESS.items():
        if getattr(args, name, None):
            return why
    if not str(getattr(args, "prompt", "") or "").strip():
        return "no PROMPT"
    return None


def _connect() -> socket.socket | None:
    """A connection to the running host (None: none runs, or its folder is not safe to use)."""
    path = socket_path()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        check_dir(path.parent)
        conn.connect(str(path))
    except (OSError, HostPlaceError):
        conn.close()
        return None
    return conn


def try_host(args: Any) -> int | None:
    """The exit code of `run` done through the running host; None: run in-process."""
    conn = _connect()
    if conn is None:
        return None
    with conn:
        return _Run(conn).run(args)


def host_running() -> bool:
    conn = _connect()
    if conn is not None:
        conn.close()
    return conn is not None


def start_for_next() -> None:
    """A session host started in the background for the next `run` (none runs: this one was cold)."""
    if host_running():
        return
    from agent.host.client import start_host
    from agent.hostplace import prepare_dir

    try:
        prepare_dir()
        start_host(socket_path())
    except (OSError, HostPlaceError):
        pass  # the next run is in-process too, as every run was before the host


def request_of(args: Any) -> dict[str, Any]:
    """The `run` request: the parsed options in SessionOptions' names, this process's environment."""
    options = {k: v for k, v in vars(args).items() if v is not None and k not in ("attach", "no_host", "dir")}
    options["json_output"] = bool(options.pop("json", False) or options.get("json_format"))
    options["workspace"] = os.path.abspath(options.get("workspace") or os.getcwd())
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return {"type": "run", "id": 1, "client": f"run (pid {os.getpid()})", "options": options,
            "env": dict(os.environ), "color": color}


class _Run:
    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.ids = iter(range(2, 1 << 62))
        self.presses = 0

    def send(self, kind: str, **fields: Any) -> None:
        with self.lock:
            try:
                self.conn.sendall((json.dumps({"type": kind, "id": next(self.ids), **fields}) + "\n").encode())
            except OSError:
                pass  # the host is gone: the reader says so

    def run(self, args: Any) -> int | None:
        try:
            self.conn.sendall((json.dumps(request_of(args)) + "\n").encode())
            lines = self.conn.makefile("rb")
            first = json.loads(lines.readline() or b"{}")
        except (OSError, ValueError):
            return None  # the host went away before it took the run: run in-process
        if not first.get("ok"):
            return None  # the host says why it cannot run it as `run` would: in-process does
        self._forward_stdin()
        self._on_interrupt()
        for raw in lines:
            line = json.loads(raw)
            kind = line.get("type")
            if kind == "out":
                stream = sys.stdout if line["fd"] == 1 else sys.stderr
                stream.write(line["text"])
                stream.flush()
            elif kind == "exit":
                return int(line["code"])
        print(f"coder-tui: error: the session host stopped (connection lost); session {first.get('session_id')} "
              f"is recorded up to its last event: `coder-tui run --resume {first.get('session_id')}` continues it",
              file=sys.stderr)
        return 1

    def _forward_stdin(self) -> None:
        def read() -> None:
            try:
                for text in sys.stdin:
                    self.send("input", text=text)
            except (OSError, ValueError, AttributeError):
                pass
            self.send("input", text=None)

        threading.Thread(target=read, name="run-stdin", daemon=True).start()

    def _on_interrupt(self) -> None:
        def interrupted(_sig: int, _frame: Any) -> None:
            self.presses += 1
            if self.presses > 1:
                os._exit(130)
            self.send("stop")

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, interrupted)
