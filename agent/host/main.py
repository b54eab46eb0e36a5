"""`coder-tui host`: the session host in the foreground (front ends start it on demand, detached)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from agent.host.place import HostPlaceError, socket_path
from agent.host.server import Host, HostRunning


def main(args: Any) -> int:
    path = Path(args.socket) if args.socket else socket_path()
    host = Host(idle=args.idle)

    def ready(where: Path) -> None:
        print(f"coder-tui host: listening on {where} (pid {os.getpid()}; exits after "
              f"{args.idle:g} s with no live session and no client)", file=sys.stderr, flush=True)

    try:
        asyncio.run(host.serve(path, ready))
    except HostRunning as exc:
        print(f"coder-tui host: {exc}", file=sys.stderr)
        return 1
    except HostPlaceError as exc:
        print(f"coder-tui host: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
