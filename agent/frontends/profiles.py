"""`coder-tui profiles` and `coder-tui mcp`: what agents and MCP servers this folder would use."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agent.config import WORKSPACE_FILE, ConfigError, load_config, read_settings
from agent.profiles import DEFAULT_PROFILE, ProfileError, load_profiles
from agent.textsafe import line
from agent.workspace_input.policy import NOT_TRUSTED, notices


def list_profiles(options: Any) -> int:
    root = Path(options.workspace).resolve()
    try:
        config = load_config(root)
        found = load_profiles(root, trusted=config.workspace_trusted, base_mode=config.mode)
    except (ConfigError, ProfileError) as exc:
        print(f"coder-tui profiles: error: {exc}", file=sys.stderr)
        return 2
    chosen = config.profile or DEFAULT_PROFILE
    width = max(len(name) for name in found.profiles)
    for name, profile in sorted(found.profiles.items()):
        mark = "*" if name == chosen else " "
        details = [profile.agent, f"tools: {', '.join(profile.tools) or 'none'}"]
        if profile.mode:
            details.append(f"mode: {profile.mode}")
        if profile.model:
            details.append(f"model: {profile.model}")
        print(line(f"{mark} {name:<{width}}  {profile.description}"))  # a workspace's profile: its text, shown
        print(line(f"  {'':<{width}}  {' · '.join(details)}  ({profile.source})"))
    for note in notices([*config.ignored, *found.ignored]):
        print(f"note: {note}", file=sys.stderr)
    return 0


def list_mcp(options: Any) -> int:
    root = Path(options.workspace).resolve()
    try:
        config = load_config(root)
    except ConfigError as exc:
        print(f"coder-tui mcp: error: {exc}", file=sys.stderr)
        return 2
    from agent.mcp import allowed_servers

    servers, notes = allowed_servers(config)
    for note in [*_untrusted_servers(root, config), *notes]:
        print(f"note: {note}", file=sys.stderr)
    if not config.mcp_servers:
        print("no MCP servers configured: add [mcp_servers.NAME] with command/args or url to config.toml "
              "or .coder-tui.toml")
        return 0
    return asyncio.run(_probe(config, servers))


def _untrusted_servers(root: Path, config: Any) -> list[str]:
    """The servers an untrusted folder's own file names: loading the config left them out."""
    if config.workspace_trusted or not any(item.setting.startswith("mcp_servers") for item in config.ignored):
        return []
    ws_file = root / WORKSPACE_FILE
    return [f"{ws_file}: MCP server {name} ignored ({NOT_TRUSTED})"
            for name in read_settings(ws_file).mcp_servers or {}]


async def _probe(config: Any, servers: dict[str, Any]) -> int:
    from agent.mcp import McpManager

    manager = McpManager(servers, lambda event: None)
    try:
        await manager.ensure_started()
        for name, settings in servers.items():
            where = settings.url or " ".join([settings.command, *settings.args])
            server = next((s for s in manager.servers if s.name == name), None)
            state = "disabled" if server is None else server.state
            note = f": {server.message}" if server is not None and server.message else ""
            print(line(f"{name}  {state}{note}  ({where}; from {config.sources.get(f'mcp_servers.{name}', '?')})"))
            for tool in (t for t in manager.tools() if t.mcp_server == name):
                access = "read-only" if tool.kind == "read" else "asks first"
                if tool.kind != "read" and tool.claims_read_only:
                    access += "; the server calls it read-only: list it in read_only_tools to believe that"
                summary = tool.description.splitlines()[0][:80] if tool.description else ""
                print(line(f"  {tool.name}  [{access}]  {summary}"))  # the server's words, shown
    finally:
        await manager.close()
    return 0 if all(s.state == "running" for s in manager.servers) else 1
