"""Stands in for `python -m tui.cli ARGS`, run by a forked child of the zygote (tests/zygote.py).

Usage: python -I -S zygote_client.py SOCKET [ARGS...]. Standard library only, nothing from the
project: it starts in some 20 ms. It hands its stdin/stdout/stderr, argv, environment and folder
to the zygote, forwards the signals it gets to the child, and ends as the child ended. When the
zygote is not there or declines (see Zygote.cold_because), it becomes `python -m tui.cli ARGS`.
"""

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def cold(args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", "tui.cli", *args])


def main() -> None:
    path, args = sys.argv[1], sys.argv[2:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        cold(args)
    pending: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        try:
            conn.sendall(f"{signum}\n".encode())
        except OSError:
            pending.append(signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    body = json.dumps({"argv": args, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    socket.send_fds(conn, [struct.pack("!I", len(body)) + body], [0, 1, 2])
    reader = conn.makefile("rb")
    first = reader.readline().decode().split(" ", 1)
    if first[0] != "pid":
        conn.close()
        cold(args)
    line = reader.readline().decode().split()
    if len(line) != 2 or line[0] != "exit":
        sys.stderr.write("zygote_client: the zygote went away while the command ran\n")
        os._exit(70)
    status = int(line[1])
    if os.WIFSIGNALED(status):
        ended_by = os.WTERMSIG(status)
        if ended_by != signal.SIGKILL:
            signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
    os._exit(os.waitstatus_to_exitcode(status))


main()
