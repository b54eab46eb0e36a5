"""Opening a session in the host from a client's `open` request: its options are the command
line's (`SessionOptions`), read in the host the way `coder-tui run` reads them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from agent.config import first_problem
from agent.host.live import LiveSession
from agent.host.wire import OpenRequest


class OpenFailed(Exception):
    """The session could not be opened (one line: why)."""


def _options(request: OpenRequest) -> Any:
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


async def open_live(request: OpenRequest, retire: Callable[[LiveSession], None]) -> LiveSession:
    """A LiveSession on what the request names: a new session, or a recorded one resumed."""
    from agent.approval import QueueApprover
    from agent.frontends.common import UsageError, build_config
    from agent.llm import configuration_problem
    from agent.profiles import ProfileError
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts
    from agent.session.record import SessionError
    from agent.session.target import TargetError, TargetSpec, open_target

    options = _options(request)
    spec = TargetSpec.from_options(options)
    try:
        target = await open_target(spec, build_config(options, None) if spec.github else None)
    except (TargetError, UsageError) as exc:
        raise OpenFailed(str(exc)) from None
    try:
        config = build_config(options, target.workspace.root)
        problem = await configuration_problem(config.model or "")
        if problem is not None:
            raise OpenFailed(problem)
        live = LiveSession(target, retire)
        session = open_session(target, config, SessionPorts(QueueApprover(), live.sink), resume=options.resume,
                               meta={"frontend": "host"})
    except (UsageError, SessionError, ProfileError) as exc:
        await target.close()
        raise OpenFailed(str(exc)) from None
    except BaseException:
        await target.close()
        raise
    live.restore(session)
    return live
