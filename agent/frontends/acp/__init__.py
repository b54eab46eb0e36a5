"""`coder-tui acp`: the agent for editors, over the Agent Client Protocol on stdin/stdout.

An editor (Zed, Toad, ...) starts this process and speaks JSON-RPC to it: `initialize`, then
`session/new` (or `session/load` to continue a recorded session) on a folder, `session/prompt`
turns whose progress comes back as `session/update` notifications, `session/cancel`, and
`session/set_mode`. Ask-mode approvals are `session/request_permission` requests. When the
editor can read and write files, the agent's file access goes through it (unsaved buffers
included). stdout carries the protocol only: logs and anything else go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

import agent.frontends.acp.sdk  # noqa: F401 - first: imports the SDK (below) without attribute docstrings
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (AgentCapabilities, ClientCapabilities, Implementation, InitializeResponse,
                        ListSessionsResponse, LoadSessionResponse, McpCapabilities, NewSessionResponse,
                        PromptCapabilities, PromptResponse, SessionCapabilities, SessionListCapabilities,
                        SetSessionModeResponse)

from agent import __version__
from agent.frontends.acp.gate import gated
from agent.frontends.acp.modes import mode_state
from agent.frontends.acp.opening import join_in_host, open_here
from agent.frontends.acp.withdraw import PermissionIds
from agent.frontends.acp.prompt import recorded_sessions
from agent.frontends.acp.session import AcpSession
from agent.frontends.acp.wire import WireWriter
from agent.frontends.common import handle_ctrl_c

log = logging.getLogger("coder_tui.acp")


class AcpAgent:
    """The ACP `Agent` side: one AcpSession per session id."""

    def __init__(self, options: Any) -> None:
        self.options = options
        self.conn: Any = None
        self.client_fs = (False, False)  # (fs/read_text_file, fs/write_text_file) offered by the client
        self.sessions: dict[str, AcpSession] = {}
        self.permission_ids = PermissionIds()  # withdraws a permission request another front end answered

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        fs = client_capabilities.fs if client_capabilities is not None else None
        self.client_fs = (bool(fs and fs.read_text_file), bool(fs and fs.write_text_file))
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(embedded_context=True, image=await _takes_images(self.options),
                                                   audio=False),
            mcp_capabilities=McpCapabilities(http=True, sse=False),
            session_capabilities=SessionCapabilities(list=SessionListCapabilities()))
        return InitializeResponse(protocol_version=min(protocol_version, PROTOCOL_VERSION),
                                  agent_capabilities=capabilities,
                                  agent_info=Implementation(name="coder-tui", title="coder-tui", version=__version__))

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers or [], resume=None)
        asyncio.get_running_loop().call_soon(session.go)  # after the response: the id is known
        return NewSessionResponse(session_id=session.session_id, modes=mode_state(session.mode))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        if session_id in self.sessions and not self.sessions[session_id].gone:
            raise RequestError.invalid_params({"sessionId": session_id, "message": "this session is already open"})
        if session_id in self.sessions:  # joined in a host that has gone since: joined again
            await self.sessions.pop(session_id).close()
        root = _folder(cwd)
        hosted, notes = await join_in_host(self.conn, self.permission_ids, self.options, root, session_id,
                                           [server.name for server in mcp_servers or []])
        session = hosted or await self._open(cwd, mcp_servers or [], resume=session_id, notes=notes)
        self.sessions[session_id] = session
        await session.replay()
        asyncio.get_running_loop().call_soon(session.go)
        return LoadSessionResponse(modes=mode_state(session.mode))

    async def _open(self, cwd: str, mcp_servers: list[Any], resume: str | None,
                    notes: list[str] | None = None) -> AcpSession:
        root = _folder(cwd)
        session = await open_here(self.conn, self.permission_ids, _config(self.options, root), root,
                                  self.client_fs, resume, mcp_servers, notes or [])
        self.sessions[session.session_id] = session
        return session

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """Recorded sessions on folders (of `cwd` when given), newest first, a page at a time; those live
        in the session host first (`_meta.coder-tui.live`)."""
        from agent.client.hosted import live_sessions

        if cwd:
            _folder(cwd)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        live = {row["session_id"]: row for row in await live_sessions() or []}  # never starts a host
        sessions, more = await asyncio.to_thread(recorded_sessions, cwd, start, live)
        return ListSessionsResponse(sessions=sessions, next_cursor=str(start + len(sessions)) if more else None)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id, "message": "no such session"})
        return session

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        return await self._session(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        await self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no methods are advertised: the model's key comes from the configuration

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.sessions.values()), return_exceptions=True)


def _folder(cwd: str) -> Path:
    if "\0" in cwd:  # no path holds one: an answer, not a traceback from the file system calls
        raise RequestError.invalid_params({"cwd": cwd, "message": "cwd holds a NUL byte, which no path can"})
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"cwd": cwd, "message": "cwd must be an absolute path"})
    return path


async def _takes_images(options: Any) -> bool:
    """Whether the model the flags and the user's config choose takes images (ACP's `image` capability):
    the `vision` setting, else litellm's table (its import is already under way: `serve` warms it)."""
    from agent.config import ConfigError, load_config
    from agent.images import accepts

    try:
        config = load_config(None, {"model": options.model, "api_base": options.api_base})
    except ConfigError:
        return False
    if not config.model:
        return False
    if config.vision is not None:
        return config.vision
    return await asyncio.to_thread(accepts, config.model, None)


def _config(options: Any, root: Path) -> Any:
    """The configuration for a session on root (flags > environment > root's file > user's)."""
    from agent.config import ConfigError, load_config

    flags = {"model": options.model, "api_base": options.api_base, "api_key": options.api_key,
             "mode": options.mode, "max_steps": options.max_steps, "sandbox": options.sandbox,
             "profile": options.profile, "workflow": options.workflow,
             "reasoning": getattr(options, "reasoning", None)}
    try:  # trust is the user's, per folder (`coder-tui trust DIR`), never the editor's
        config = load_config(root, flags)
        config.require_model()
    except ConfigError as exc:
        raise RequestError.invalid_params({"message": str(exc)}) from None
    # A model litellm cannot route fails the first prompt with litellm's reason: checking it here
    # would make the editor wait for litellm's import before it can even show the session. A model
    # on the litellm path starts its import now, in a thread (the built-in clients need none).
    from agent.llm.preload import warm_for

    warm_for(config.model, config.api_base, config.model_path)
    return config


async def serve(options: Any, early: Any = None) -> None:
    """`early`: what agent/frontends/acp_initialize.py read (and answered) before the SDK was imported."""
    from acp import run_agent

    agent: Any = AcpAgent(options)  # the SDK's Agent protocol lists methods we do not offer
    if early is not None and early.client_fs is not None:
        agent.client_fs = early.client_fs
    reader, writer = await _protocol_streams(early.rest if early is not None else b"")
    checked, feeding = gated(reader, writer)  # a line that is not one JSON-RPC object is answered here
    agent.permission_ids.writer = writer
    protocol = asyncio.ensure_future(run_agent(agent, writer, checked, observers=[agent.permission_ids.observe]))
    closing: list[asyncio.Task[None]] = []

    async def shut_down() -> None:  # the runs stop and are recorded first, then the protocol ends
        await agent.close()
        protocol.cancel()

    def on_signal() -> None:  # Ctrl+C or SIGTERM
        if not closing:
            closing.append(asyncio.get_running_loop().create_task(shut_down()))

    handle_ctrl_c(asyncio.get_running_loop(), on_signal)
    try:
        await protocol
    except asyncio.CancelledError:
        if not protocol.cancelled():
            raise
    finally:
        feeding.cancel()
        if closing:
            await closing[0]
        else:
            await agent.close()


async def _protocol_streams(read_already: bytes = b"") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and a private copy of stdout for the protocol; fd 1 itself then points at stderr, so
    a stray print (ours, a library's, a child process's) cannot corrupt the JSON-RPC stream."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    if read_already:
        reader.feed_data(read_already)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, protocol_out)
    return reader, WireWriter(transport, protocol, None, loop)


def main(options: Any, early: Any = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="coder-tui acp: %(levelname)s %(message)s")
    try:
        asyncio.run(serve(options, early))
    except KeyboardInterrupt:
        return 130
    return 0
