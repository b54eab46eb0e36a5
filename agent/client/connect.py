"""`connect`: the one place that decides whether a session runs in the session host or in this
process, and opens it there.

In this process when the user opted out of the host (`--no-host`, CODER_TUI_HOST=off, `host =
"off"` in config.toml), when the session needs this process (its images, a GitHub or room target,
a fork, an edit overlay), when the model is one the built-in clients serve (agent/llm/routing.py:
nothing slow to import, so a host would only add a hop) or when no host can be used. In the host
otherwise: a model on the litellm path is imported once there, warm for every front end.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agent.client.handle import SessionHandle

if TYPE_CHECKING:
    from agent.client.hosted import HostedHandle
    from agent.config import Config
    from agent.session.ports import SessionOptions
    from agent.session.record import SessionStore
    from agent.session.target import Target

Where = Literal["host", "local"]
HostChoice = Literal["auto", "off", "always"]
HOST_ENV = "CODER_TUI_HOST"
# SessionOptions fields a session in the host cannot take: each needs this process
NEEDS_THIS_PROCESS = {"images": "images (read here)", "github": "--github", "clone": "--clone",
                      "issue": "--issue", "room": "a room", "fork": "--fork", "trust": "--trust"}
# SessionOptions fields the host's `open` takes (agent/host/opening.py options_of)
OPEN_FIELDS = ("workspace", "model", "api_base", "api_key", "mode", "workflow", "reasoning", "profile",
               "max_steps", "max_cost", "max_tokens", "sandbox")


@dataclass(frozen=True)
class Choice:
    where: Where
    why: str


def choose(options: SessionOptions, config: Config, host: HostChoice = "auto") -> Choice:
    """Where a session with these options runs, and why."""
    if host == "off" or (host == "auto" and os.environ.get(HOST_ENV, "").strip().lower() == "off"):
        return Choice("local", "the session host is off")
    for field, why in NEEDS_THIS_PROCESS.items():
        if getattr(options, field, None):
            return Choice("local", f"{why} needs this process")
    if host == "always":
        return Choice("host", "asked for")
    from agent.llm.routing import route

    path = route(config.model or "", config.api_base, config.model_path)
    if path.builtin:
        return Choice("local", f"{config.model} is served by the {path.describe()} (nothing slow to load)")
    return Choice("host", f"{config.model} needs litellm: imported once in the session host")


def open_options(options: SessionOptions) -> dict[str, object]:
    values = {name: getattr(options, name) for name in OPEN_FIELDS}
    return {name: value for name, value in values.items() if value is not None}


async def connect(options: SessionOptions, config: Config, *, name: str, host: HostChoice = "auto",
                  target: Target | None = None, store: SessionStore | None = None,
                  meta: dict[str, object] | None = None) -> SessionHandle:
    """The session the options name (new, or `options.resume`), opened where `choose` says.
    Raises what opening raises: HostRefused (the host's reason), TargetError, SessionError."""
    choice = choose(options, config, host)
    if choice.where == "host":
        handle = await _hosted(options, name)
        if handle is not None:
            return handle
    from agent.client.local import LocalHandle
    from agent.session.target import TargetSpec, open_target

    target = target or await open_target(TargetSpec.from_options(options), config)
    try:
        return LocalHandle.open(target, config, name=name, resume=options.resume, store=store, meta=dict(meta or {}))
    except BaseException:
        await target.close()
        raise


async def _hosted(options: SessionOptions, name: str) -> SessionHandle | None:
    """The session in the host (started on demand); None when no host can be used."""
    from agent.client.hosted import HostedHandle
    from agent.host.client import HostClient, HostUnavailable

    try:
        client = await HostClient.connect_or_start()
    except HostUnavailable:
        return None
    return await HostedHandle.open(client, options.resume or "new", name, open_options(options), env=dict(os.environ))


async def join_in_host(session: str, name: str, options: dict[str, object] | None = None, *,
                       live_only: bool = False, start: bool = True) -> HostedHandle:
    """Session `session` (an id, a prefix, `last`, `new`) opened or joined in the session host (started
    when none runs and `start`): for a front end that serves the host's sessions by id (serve's view
    of a session another front end runs). HostUnavailable, HostRefused, ConnectionError as
    agent/client/hosted.py `open_in_host` raises them."""
    from agent.client.hosted import open_in_host

    return await open_in_host(session, name, dict(options or {}), live_only=live_only, start=start)


async def live_in_host(workspace: str) -> list[dict[str, Any]]:
    """The sessions live in the session host that work in `workspace` (a label), with who is attached
    (empty when no host runs)."""
    from agent.host.client import live_sessions

    rows = await live_sessions() or []
    return [{**row, "live": True} for row in rows if row.get("workspace") == workspace]
