"""Where an ACP session runs: `session/new` in this process on the editor's folder (its file text
through the editor when it offers that), `session/load` joined in the session host (started on
demand, as `run --attach` does) next to the other front ends, else in this process, said once.
Either way the editor's session drives a handle (agent/client) through agent/frontends/acp/session.py.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

from acp import RequestError

from agent.client import editor
from agent.config import Config
from agent.frontends.acp.modes import add_client_mcp_servers
from agent.frontends.acp.session import AcpSession
from agent.frontends.acp.withdraw import PermissionIds
from agent.textsafe import visible
from agent.workspaces.base import WorkspaceError
from agent.workspaces.editor import EditorWorkspace

log = logging.getLogger("coder_tui.acp")
OPTION_FLAGS = ("model", "api_base", "api_key", "mode", "max_steps", "sandbox", "profile", "workflow", "reasoning")
_said: list[str] = []  # "no host": said once per process


def host_options(options: Any, root: Path) -> dict[str, Any]:
    """The host's `open` options: this process's flags, the editor's folder."""
    values = {name: getattr(options, name, None) for name in OPTION_FLAGS}
    return {"workspace": str(root), **{k: v for k, v in values.items() if v is not None}}


def client_name() -> str:
    return f"acp (pid {os.getpid()})"


async def open_here(conn: Any, ids: PermissionIds, config: Config, root: Path, client_fs: tuple[bool, bool],
                    resume: str | None, mcp_servers: list[Any], notes: list[str]) -> AcpSession:
    """A session in this process on the editor's folder (new, or `resume`d from its record)."""
    from agent.profiles import ProfileError
    from agent.session.record import SessionError
    from agent.session.target import TargetError, TargetSpec, open_target

    # what the folder's own files asked for and did not get: the session says it at the first prompt
    notes = [*notes, *add_client_mcp_servers(config, mcp_servers)]
    try:
        target = await open_target(TargetSpec(workspace=str(root)), config)
    except TargetError as exc:
        raise RequestError.invalid_params({"cwd": str(root), "message": exc.reason}) from None
    session = AcpSession(conn, ids, root)
    reads, writes = client_fs
    assert target.workspace.root is not None
    await target.workspace.close()
    workspace = EditorWorkspace(target.workspace.root, _reader(session) if reads else None,
                                _writer(session) if writes else None, on_applied=session.events.changes_written)
    session.events.root = workspace.root
    target = dataclasses.replace(target, workspace=workspace)
    try:
        handle = editor.open_local(target, config, name=client_name(), resume=resume)
    except (SessionError, ProfileError) as exc:
        await target.close()
        raise RequestError.invalid_params({"message": str(exc)}) from None
    session.bind(handle, replay=False)
    session.notes[:0] = notes
    return session


def _reader(session: AcpSession) -> Any:
    async def read(path: str) -> str:
        try:
            response = await session.conn.read_text_file(session_id=session.session_id, path=path)
        except RequestError as exc:
            raise WorkspaceError(_client_error(exc)) from None
        return str(response.content)

    return read


def _writer(session: AcpSession) -> Any:
    async def write(path: str, text: str) -> None:
        try:
            await session.conn.write_text_file(session_id=session.session_id, path=path, content=text)
        except RequestError as exc:
            raise WorkspaceError(_client_error(exc)) from None

    return write


async def join_in_host(conn: Any, ids: PermissionIds, options: Any, root: Path, session_id: str,
                       mcp_servers: list[str]) -> tuple[AcpSession | None, list[str]]:
    """The session joined in the host (started if none runs); else None and what to say in this
    process (that no host can be used: once per process)."""
    from agent.client.hosted import HostRefused, HostUnavailable, open_in_host

    try:
        handle = await open_in_host(session_id, client_name(), host_options(options, root))
    except (HostRefused, ConnectionError, TimeoutError) as exc:
        raise RequestError.invalid_params({"sessionId": session_id, "message": str(exc)}) from None
    except HostUnavailable as exc:
        if _said:
            return None, []
        _said.append(str(exc))
        log.warning("the session host is not available (%s); sessions load in-process", visible(str(exc)))
        return None, [f"the session host is not available ({visible(str(exc))}); this session runs in this "
                      "process only"]
    session = AcpSession(conn, ids, root, session_id)
    session.bind(handle, replay=True)
    for server in mcp_servers:
        session.events.note(f"⚠ MCP server {visible(server)} not added: a session shared in the session host "
                            "keeps its own")
    if handle.started_host:
        session.events.note("started the session host (it stays for the next front end)")
    return session, []


def _client_error(exc: RequestError) -> str:
    data = exc.data
    detail = data.get("message") or data.get("details") if isinstance(data, dict) else data
    return f"{exc} ({detail})" if detail else str(exc)
