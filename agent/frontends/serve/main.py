"""Starting `coder-tui serve`: the token, the configuration, the target, the listening socket."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from agent.config import Config
from agent.frontends.common import UsageError, build_config, run_command
from agent.frontends.serve.app import MAX_BODY, build_app
from agent.frontends.serve.early import EarlyListener
from agent.frontends.serve.limits import RATE_LIMIT
from agent.frontends.serve.sessions import InHost, Sessions
from agent.frontends.serve.start import Early, StartError, check_combinations, choose_token
from agent.session.target import Target, TargetError, TargetSpec, open_target

MODE_NOTES = {
    "ask": ("approvals: every edit, command and web request waits for POST /api/approvals/ID with "
            '{"decision": "allow_once"|"allow_all"|"deny"|"stop"} (the stream says so in a content event '
            "and an approval_required event); a client that does not answer waits: --mode allow runs without asking"),
    "allow": "approvals: none (--mode allow): edits, commands and web requests run without asking",
    "plan": "approvals: none (--mode plan): the agent only reads and proposes; nothing is changed",
}


class Opener:
    """A fresh target for each session; the one opened at start (to check it opens) goes to the first."""

    def __init__(self, spec: TargetSpec, config: Config, first: Target) -> None:
        self.spec, self.config = spec, config
        self.first: Target | None = first
        self.label = first.label  # whose recorded sessions this server may resume

    async def __call__(self) -> Target:
        if self.first is not None:
            target, self.first = self.first, None
            return target
        return await open_target(self.spec, self.config, notice=_notice)

    async def close(self) -> None:
        if self.first is not None:
            await self.first.close()


def _notice(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Server:
    runner: web.AppRunner
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


async def listen(sessions: Sessions, token: str, host: str, port: int, max_body: int = MAX_BODY,
                 check_host: bool = True, rate_limit: int = RATE_LIMIT, early: EarlyListener | None = None) -> Server:
    """Serve on host:port (0: any free port) until `runner.cleanup()`; `check_host`: answer only
    requests to a loopback Host (agent/frontends/serve/guard.py). `early`: the socket bound
    already (agent/frontends/serve/early.py), taken over with the requests waiting on it."""
    app = build_app(sessions, token, max_body, check_host=check_host, rate_limit=rate_limit)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    try:
        if early is None:
            await web.TCPSite(runner, host, port).start()
        else:
            sock, waiting = early.take()
            await web.SockSite(runner, sock).start()
            for conn in waiting:  # accepted by the early listener, their requests unread: aiohttp's now
                await asyncio.get_running_loop().connect_accepted_socket(runner.server, conn)  # type: ignore[arg-type]
    except OSError as exc:
        await runner.cleanup()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return Server(runner, host, runner.addresses[0][1])


async def serve(options: Any, early: Early | None = None) -> int:
    """`early`: start.py's first steps, done (the socket listens, the banner's first line is out)."""
    from agent.frontends.serve.ready import ModelLayer
    from agent.secrets import register

    early = early or _first_steps(options)
    token, source, bound = early.token, early.source, early.listener
    register(token)
    spec = TargetSpec(workspace=None if options.github else options.workspace, github=options.github,
                      clone=options.clone)
    root = Path(options.workspace) if not options.github and os.path.isdir(options.workspace) else None
    config = build_config(options, root)
    model = ModelLayer(config.require_model(), config.api_base, config.model_path)  # litellm path: checked once it loaded
    try:
        first = await open_target(spec, config, notice=_notice)
    except TargetError as exc:
        model.close()
        raise UsageError(f"{exc.message}{f' ({exc.hint})' if exc.hint else ''}") from None
    opener = Opener(spec, config, first)
    sessions = Sessions(config, opener, ready=model.ready,
                        grace=getattr(options, "reconnect_grace", 30), host=_hub(options, first))
    try:
        # A token the user gave may be used through a proxy under another name; a generated one
        # serves loopback only, so any other Host is a web page's DNS rebinding.
        server = await listen(sessions, token, options.host, options.port, options.max_body,
                              check_host=source == "generated", rate_limit=options.rate_limit, early=bound)
    except UsageError:
        model.close()
        await opener.close()
        raise
    stop = _stop_on_signal()  # before the banner: whoever read it may signal at once
    if bound is None:  # else printed once bound (start.py)
        print(f"listening on {server.url}", flush=True)
    _banner(server.url, early, f"workspace: {first.label}  mode: {config.mode}  (Ctrl+C stops)", config.mode,
            "sessions: live in the session host (started on demand; `coder-tui sessions` and `run --attach ID` "
            "see them; --no-host keeps them here)" if sessions.host is not None else
            f"sessions: in this process ({'--no-host' if getattr(options, 'no_host', False) else '--github'})")
    model.start()  # a litellm model loads it from here on: not competing with the start for the interpreter
    problem = await model.until_problem_or(stop)
    await server.runner.cleanup()
    await opener.close()
    if problem is not None:
        raise UsageError(f"{problem}; the model is set by: {config.sources.get('model', 'the configuration')}")
    return 0


def _first_steps(options: Any) -> Early:
    """start.py's checks and token, when its `main` did not run them (nothing bound early then)."""
    try:
        check_combinations(options)
        return Early(*choose_token(options, dict(os.environ)), None)
    except StartError as exc:
        raise UsageError(str(exc)) from None


def _banner(url: str, early: Early, workspace: str, mode: str, sessions: str) -> None:
    """The banner's lines after "listening on URL"."""
    token, source = early.token, early.source
    for line in (f"token: {token}" if source == "generated" else f"token: the one given by {source}", workspace,
                 MODE_NOTES[mode], view_line(url, token, source), sessions):
        print(line, flush=True)


def view_line(url: str, token: str, source: str) -> str:
    """Where the browser view is (agent/frontends/serve/view.py); a generated token rides in the
    address's fragment, which the browser keeps to itself (no request, no log carries it)."""
    if source == "generated":
        return f"browser view: {url}/view#token={token}"
    return f"browser view: {url}/view (it asks for the token)"


def _hub(options: Any, first: Target) -> InHost | None:
    """Where serve's sessions live: the session host (agent/frontends/serve/sessions.py InHost), unless
    --no-host or a GitHub target (serve publishes its commits itself)."""
    if getattr(options, "no_host", False) or options.github:
        return None
    from agent.session.ports import SessionOptions

    values = SessionOptions.from_args(options).model_dump(exclude_none=True, exclude={"json_output", "prompt",
                                                                                       "resume", "json_format"})
    values["workspace"] = os.path.abspath(options.workspace)
    root = first.workspace.root
    return InHost(values, Path(root) if root is not None else Path(values["workspace"]), first.label)


def _stop_on_signal() -> asyncio.Event:
    """Set by Ctrl+C or SIGTERM: the server then stops its runs and closes cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


def main(options: Any, early: Early | None = None) -> int:
    """`early`: see `serve`; the CLI starts at start.py's `main`, which gives it."""
    async def serving(options: Any) -> int:
        return await serve(options, early)

    return run_command(serving, options, "coder-tui serve")
