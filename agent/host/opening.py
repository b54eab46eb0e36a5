"""What the host needs to open a session from a client's `open` request: its options are the
command line's (`SessionOptions`); the opener itself is the `coder-tui host` front end's
(agent/frontends/host.py), which reads them the way `coder-tui run` does."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from agent.config import first_problem
from agent.host.live import LiveSession
from agent.host.wire import OpenRequest


class OpenFailed(Exception):
    """The session could not be opened (one line: why)."""


Opener = Callable[[OpenRequest, Callable[[LiveSession], None]], Awaitable[LiveSession]]


def options_of(request: OpenRequest) -> Any:
    """The request's SessionOptions (`resume` from its session reference); OpenFailed when invalid."""
    from agent.session.ports import SessionOptions

    values = {**request.options, "resume": None if request.session == "new" else request.session}
    try:
        return SessionOptions.model_validate(values)
    except ValidationError as exc:
        where, problem = first_problem(exc, "options")
        raise OpenFailed(f"open: bad option {where}: {problem}") from None


def recorded_id(request: OpenRequest) -> str | None:
    """The full id of the recorded session a reference names (None for `new` or none found)."""
    from agent.session.record import SessionError, SessionStore

    if request.session == "new":
        return None
    workspace = request.options.get("workspace") if request.session == "last" else None
    try:
        path = SessionStore().resolve(request.session, workspace=_label(workspace))
    except SessionError:
        return None
    return path.stem


def _label(workspace: Any) -> str | None:
    if not workspace:
        return None
    from agent.workspaces.base import WorkspaceError
    from agent.workspaces.local import LocalWorkspace

    try:
        return LocalWorkspace(str(workspace)).label
    except WorkspaceError:
        return None


def with_client_keys(config: Any, env: dict[str, str] | None) -> Any:
    """The session's config with the key and endpoint of the client's environment made explicit:
    litellm would read the host's own variables otherwise (another client's, or none)."""
    if env is None:
        return config
    from pydantic import SecretStr

    from agent.config import provider_of

    var = config.key_variable()
    if config.api_key is None and var and env.get(var):
        config.api_key = SecretStr(env[var])
    provider = provider_of(config.model or "").upper()
    for name in (f"{provider}_BASE_URL", f"{provider}_API_BASE") if provider and not config.api_base else ():
        if env.get(name):
            config.api_base = env[name]
            break
    return config
