"""An ACP session's modes, stop reasons and the editor's MCP servers (agent/frontends/acp/session.py)."""

from __future__ import annotations

from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SessionMode, SessionModeState, StopReason

from agent.config import Config, McpServerSettings
from agent.events import Mode

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


