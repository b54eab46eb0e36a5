"""`coder-tui host`: the session host in the foreground (front ends start it on demand, detached),
and how it opens a session: the client's options read as `coder-tui run` reads them."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from collections.abc import Callable
from typing import Any

from agent.host.live import LiveSession
from agent.host.opening import OpenFailed, options_of, with_client_keys
from agent.hostplace import HostPlaceError, socket_path
from agent.host.wire import OpenRequest
from agent.host.server import Host, HostRunning


def main(args: Any) -> int:
    path = Path(args.socket) if args.socket else socket_path()
    from agent.frontends.oneshot import dispatch

    host = Host(open_live, idle=args.idle, runs=dispatch)

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


async def open_live(request: OpenRequest, retire: Callable[[LiveSession], None], approver: Any = None) -> LiveSession:
    """A LiveSession on what the request names: a new session, or a recorded one resumed (its
    approvals answered through the host, or by `approver`: a one-shot `run`'s stdin)."""
    from agent.approval import QueueApprover
    from agent.frontends.common import UsageError, build_config
    from agent.llm import configuration_problem
    from agent.profiles import ProfileError
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts
    from agent.session.record import SessionError
    from agent.session.target import TargetError, TargetSpec, open_target

    options = options_of(request)
    spec = TargetSpec.from_options(options)
    try:
        target = await open_target(spec, build_config(options, None, request.env) if spec.github else None)
    except TargetError as exc:  # the client named the session (`attach ID`, `run --attach ID`), not --resume
        raise OpenFailed(exc.reason if exc.message.startswith("--resume: ") else exc.message) from None
    except UsageError as exc:
        raise OpenFailed(str(exc)) from None
    try:
        config = with_client_keys(build_config(options, target.workspace.root, request.env), request.env)
        problem = await configuration_problem(config.model or "", config.api_base, config.model_path)
        if problem is not None:
            raise OpenFailed(problem)
        live = LiveSession(target, retire)
        session = open_session(target, config, SessionPorts(approver or QueueApprover(), live.sink), resume=options.resume,
                               meta={"frontend": "host"})
    except (UsageError, SessionError, ProfileError) as exc:
        await target.close()
        raise OpenFailed(str(exc)) from None
    except BaseException:
        await target.close()
        raise
    live.restore(session)
    return live
