"""One ACP session: our AgentSession on the client's folder, its updates, and the prompt running."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import HttpMcpServer, McpServerStdio, PromptResponse, SessionMode, SessionModeState, StopReason

from agent.config import Config, McpServerSettings
from agent.events import Mode, WarningEvent
from agent.frontends.acp.events import AcpEvents
from agent.frontends.acp.permission import AcpApprover, AcpPlanReviewer
from agent.frontends.acp.prompt import history_updates, prompt_images, prompt_text
from agent.images import ImageError
from agent.frontends.acp.updates import UpdateStream
from agent.secrets import redact
from agent.session.shapes import skipped_note
from agent.workspaces.base import WorkspaceError
from agent.workspaces.editor import EditorWorkspace

MODES: list[tuple[Mode, str, str]] = [
    ("ask", "Ask", "Asks before every edit, command and web request"),
    ("allow", "Allow", "Edits, runs commands and fetches without asking (every diff is still shown)"),
    ("plan", "Plan", "Only reads and proposes; changes nothing"),
]
STOP_REASONS: dict[str, StopReason] = {"answered": "end_turn", "stopped": "cancelled", "max_steps": "max_turn_requests",
                                       "budget": "max_tokens"}


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current,
                            available_modes=[SessionMode(id=m, name=n, description=d) for m, n, d in MODES])


def add_client_mcp_servers(config: Config, servers: list[Any]) -> list[str]:
    """The editor's MCP servers join the configured ones (same name: the editor's wins); notes on the rest."""
    notes: list[str] = []
    for server in servers:
        if isinstance(server, McpServerStdio):
            settings = McpServerSettings(command=server.command, args=list(server.args),
                                         env={e.name: e.value for e in server.env})
        elif isinstance(server, HttpMcpServer):
            settings = McpServerSettings(url=server.url, headers={h.name: h.value for h in server.headers})
        else:
            notes.append(f"MCP server {server.name} ignored: only stdio and HTTP servers are supported")
            continue
        config.mcp_servers[server.name] = settings
        config.sources[f"mcp_servers.{server.name}"] = "the editor (session/new)"
    return notes


class AcpSession:
    def __init__(self, conn: Any, stream: UpdateStream, events: AcpEvents, notes: list[str]) -> None:
        self.conn = conn
        self.stream = stream
        self.events = events
        self.notes = notes  # said at the first prompt: the client knows the session id by then
        self.session: Any = None
        self.target: Any = None
        self.running: asyncio.Task[Any] | None = None  # the prompt's run

    @classmethod
    async def open(cls, conn: Any, config: Config, root: Path, client_fs: tuple[bool, bool], resume: str | None,
                   notes: list[str]) -> AcpSession:
        from agent.session.open import open_session
        from agent.session.ports import SessionPorts
        from agent.session.target import TargetError, TargetSpec, open_target

        try:
            target = await open_target(TargetSpec(workspace=str(root)), config)
        except TargetError as exc:
            raise RequestError.invalid_params({"cwd": str(root), "message": exc.reason}) from None
        stream = UpdateStream(conn, "")
        events = AcpEvents(stream, None, lambda name: None)
        self = cls(conn, stream, events, notes)
        reads, writes = client_fs
        # The folder as open_target opened it, with file text through the editor when it offers that.
        assert target.workspace.root is not None
        await target.workspace.close()
        workspace = EditorWorkspace(target.workspace.root, self._read if reads else None,
                                    self._write if writes else None, on_applied=events.changes_written)
        self.target = dataclasses.replace(target, workspace=workspace)
        events.root = workspace.root
        ports = SessionPorts(AcpApprover(conn, stream, events), self._sink, AcpPlanReviewer(conn, stream, events))
        self.session = open_session(self.target, config, ports, resume=resume)
        stream.session_id = self.session.session_id
        events.approval_kind = self._approval_kind
        return self

    @property
    def session_id(self) -> str:
        return str(self.session.session_id)

    def _sink(self, event: Any) -> None:
        if self.session is None and isinstance(event, WarningEvent):
            self.notes.append(event.message)  # said while the session opens: at the first prompt
            return
        self.events.handle(event)

    def _approval_kind(self, name: str) -> str | None:
        tool = self.session.registry.get(name)
        return tool.kind if tool is not None else ("network" if name.startswith("mcp__") else None)

    # -- the client's file system -------------------------------------------------------------
    async def _read(self, path: str) -> str:
        try:
            response = await self.conn.read_text_file(session_id=self.session_id, path=path)
        except RequestError as exc:
            raise WorkspaceError(_client_error(exc)) from None
        return str(response.content)

    async def _write(self, path: str, text: str) -> None:
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=path, content=text)
        except RequestError as exc:
            raise WorkspaceError(_client_error(exc)) from None

    # -- requests ---------------------------------------------------------------------------
    async def replay(self) -> None:
        """A loaded session's conversation, tool calls and plan, before session/load answers."""
        updates, skipped = history_updates(self.session.restored, self.events.root, self._approval_kind)
        for update in updates:
            self.stream.send(update)
        if skipped:
            self.events.handle(WarningEvent(message=skipped_note(skipped)))
        await self.stream.flush()

    async def prompt(self, blocks: list[Any]) -> PromptResponse:
        if self.session.running:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        text = await prompt_text(blocks, self.session.workspace)
        try:
            images = prompt_images(blocks)
            if images:
                self.session.check_images()
        except ImageError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        for note in self.notes:
            self.session.emit(WarningEvent(message=note))
        self.notes.clear()
        self.events.problem = None
        self.running = asyncio.get_running_loop().create_task(self.session.run(text, images))
        try:
            complete = await self.running
        except Exception as exc:  # a failure before the loop could report it (e.g. no model configured)
            await self.stream.flush()
            raise RequestError(-32603, redact(str(exc) or type(exc).__name__)) from None
        await self.stream.flush()
        if complete.completion_reason == "error":
            raise RequestError(-32603, self.events.problem or complete.final_response)
        return PromptResponse(stop_reason=STOP_REASONS.get(complete.completion_reason, "end_turn"))

    def advertise_commands(self) -> None:
        """The custom commands (agent/custom/commands.py) as the client's available commands."""
        from acp.schema import AvailableCommand, AvailableCommandsUpdate, UnstructuredCommandInput

        commands = self.session.agent.input.commands.commands.values()
        if not commands:  # nothing to offer: the client's list stays empty
            return
        self.stream.send(AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[
            AvailableCommand(name=c.name, description=c.description or c.name,
                             input=UnstructuredCommandInput(hint=c.file.argument_hint) if c.file.argument_hint else None)
            for c in sorted(commands, key=lambda c: c.name)]))

    def cancel(self) -> None:
        self.session.stop()

    def set_mode(self, mode: str) -> None:
        if mode not in {m for m, _, _ in MODES}:
            raise RequestError.invalid_params({"modeId": mode, "message": "modes are plan, ask and allow"})
        self.session.mode = mode

    async def close(self) -> None:
        """Stop a run that is still going (the client left), let it record its end, then close."""
        self.session.stop()
        if self.running is not None and not self.running.done():
            await asyncio.wait([self.running], timeout=10)
        await self.session.close()
        await self.target.close()
        await self.stream.close()


def _client_error(exc: RequestError) -> str:
    data = exc.data
    detail = data.get("message") or data.get("details") if isinstance(data, dict) else data
    return f"{exc} ({detail})" if detail else str(exc)
