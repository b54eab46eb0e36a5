"""`coder-tui serve`'s first steps, before anything heavy is imported (issue 22: ready within 0.5 s).

The checks that need nothing (argument combinations, the token, the folder), then the socket bound
and "listening on URL" printed, with `GET /api/health` answered from there on (early.py); then
main.py's start (aiohttp, the configuration, the target, the session host), which takes the socket
over and prints the rest of the banner. A problem found after the first line (a bad configuration)
is still one line and exit code 2, as an unknown model's provider found once litellm loads is.
"""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass
from typing import Any

from agent.frontends.serve.early import EarlyListener
from agent.frontends.serve.guard import is_loopback

TOKEN_VARIABLE = "CODER_TUI_SERVE_TOKEN"


class StartError(Exception):
    """A usage error found before the agent's modules are imported (one line, exit code 2)."""


@dataclass
class Early:
    token: str
    source: str  # where the token came from: --token, the variable, or "generated"
    listener: EarlyListener | None  # None: not bound early (main.py binds, or reports the problem)


def check_combinations(options: Any) -> None:
    if options.github and options.workspace != ".":
        raise StartError("DIR cannot be combined with --github: the repository is the workspace")
    if options.clone and not options.github:
        raise StartError("--clone needs --github OWNER/REPO")


def choose_token(options: Any, environ: dict[str, str]) -> tuple[str, str]:
    """(token, where it came from); a non-loopback host without a given token is refused."""
    if options.token:
        return options.token, "--token"
    if environ.get(TOKEN_VARIABLE):
        return environ[TOKEN_VARIABLE], TOKEN_VARIABLE
    if not is_loopback(options.host):
        raise StartError(f"--host {options.host} is reachable from other machines: give the token yourself "
                         f"with --token or {TOKEN_VARIABLE} (or bind to 127.0.0.1)")
    return secrets.token_urlsafe(24), "generated"


def begin(options: Any) -> Early:
    """The token, and the socket listening (answering health) with the banner's first line printed;
    a missing folder is left for the target's own message (nothing bound then)."""
    check_combinations(options)
    token, source = choose_token(options, dict(os.environ))
    if not options.github and not os.path.isdir(options.workspace):
        return Early(token, source, None)
    try:
        listener = EarlyListener(options.host, options.port, check_host=source == "generated")
    except OSError as exc:
        # the error alone (create_server retells the address; a name that does not resolve has its own words)
        why = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)
        raise StartError(f"cannot listen on {options.host}:{options.port}: {why}") from None
    print(f"listening on {listener.url}", flush=True)
    listener.start()
    return Early(token, source, listener)


def main(options: Any) -> int:
    try:
        early = begin(options)
    except StartError as exc:
        from agent.textsafe import visible

        print(f"coder-tui serve: error: {visible(str(exc))}", file=sys.stderr)
        return 2
    try:
        from agent.frontends.serve.main import main as serve_main

        return serve_main(options, early)
    finally:
        if early.listener is not None:
            early.listener.close()
