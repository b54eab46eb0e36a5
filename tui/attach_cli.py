"""`coder-tui attach [ID]`: the app on a session that lives in the session host (tui/attaching.py)."""

from __future__ import annotations

import argparse

from tui.cliargs import MODES, connection_options
from tui.helpformat import WrappedRawHelp

HELP = """Open the app on a session in the session host: join it if it is live (another front end,
e.g. `coder-tui run --attach`, drives it too), or have the host open the recorded session (or a
new one). Everyone attached sees every prompt and event; an approval is answered by whoever
answers first, in any front end; a prompt sent while a turn runs waits behind it. Esc stops the
host's run; quitting the app detaches and the run goes on. The host starts if none runs; when no
host can be used, the app says so once and opens the session in-process, as `coder-tui --resume ID`."""


def attach_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coder-tui attach", description=HELP,
                                     formatter_class=WrappedRawHelp)
    parser.add_argument("session", metavar="ID", nargs="?", default="",
                        help="a session id, a unique prefix, `last` (this folder's newest) or `new`; without "
                             "it, a picker of the live sessions (and who is attached) and this folder's recent ones")
    parser.add_argument("--workspace", metavar="DIR", default=".",
                        help="the folder of `new` and of the recorded sessions listed (default: .)")
    parser.add_argument("--mode", choices=MODES, help="approval mode of a session the host opens now")
    connection_options(parser, reasoning=False)
    parser.add_argument("--theme", metavar="NAME", help="colour theme")
    return parser


def cmd_attach(argv: list[str]) -> int:
    parser = attach_parser()
    options = parser.parse_args(argv)
    import os

    if not os.path.isdir(options.workspace):
        parser.error(f"--workspace: {options.workspace!r} is not a folder")
    from tui.cli import launch_parser, usage_error

    if (missing := _missing(options.session)) is not None:  # said at once, not on a screen
        return usage_error(f"attach: {missing}")

    launch = [options.workspace]
    for flag in ("mode", "model", "api_base", "api_key", "theme"):
        value = getattr(options, flag)
        if value is not None:
            launch += [f"--{flag.replace('_', '-')}", value]
    app_options = launch_parser().parse_args(launch)
    app_options.attach = options.session
    import gc

    gc.disable()  # as the app's launch does: it freezes the toolkit's objects after the first frame
    from tui.app import run_app

    return run_app(app_options)


def _missing(ref: str) -> str | None:
    """Why `ref` names no session to attach to: none recorded, and none live in a running host (a
    live session without a prompt yet has no record). The host is only asked, never started, and
    only when no record is named so."""
    from agent.session.known import missing_session

    if (problem := missing_session(ref)) is None:
        return None
    import asyncio

    from agent.client.hosted import live_sessions

    live = asyncio.run(live_sessions()) or []
    return None if any(str(row.get("session_id", "")).startswith(ref) for row in live) else problem
