"""MCP servers as tool sources: `[mcp_servers.NAME]` in the config (stdio `command` or HTTP `url`).

Servers start when the agent first needs its tools, all at once, each within its timeout, and stop
when the session closes. Their tools are offered as `mcp__NAME__TOOL` with the server's own JSON
schema; a tool runs like a read only when the user's config lists it in the server's
`read_only_tools` (a server's own `readOnlyHint` is not believed: a "read-only" tool that writes
would run in plan mode without asking); any other is asked like a network request. A server that fails to start or dies is reported once (an `mcp_server` event and an
error) and its tools are withdrawn; nothing of it reaches the loop as an exception.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from agent import paths
from agent.events import ErrorEvent, McpServerState
from agent.secrets import redact, register
from agent.llm.toolschema import NAME_OK, fit_name
from agent.tools.base import Proposal, Tool, ToolArgs, ToolContext, ToolError

CALL_TIMEOUT = 300.0
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|AUTHORIZATION", re.IGNORECASE)
NAME_RE = re.compile(r"[^A-Za-z0-9_-]")


class McpArgs(ToolArgs):
    """Whatever the server's schema asks for; the server validates."""

    model_config = ConfigDict(extra="allow")


def tool_name(server: str, tool: str, taken: frozenset[str] | set[str] = frozenset()) -> str:
    """`mcp__SERVER__TOOL` as every provider accepts a tool name (agent/llm/toolschema.py): characters
    outside `[a-zA-Z0-9_-]` become `_`; a name too long, or already taken by another tool once
    cleaned (`a.b` and `a_b`), ends in a hash of the original instead of being cut or dropped."""
    return fit_name(f"mcp__{server}__{tool}", taken)


class McpTool(Tool):
    Args = McpArgs

    def __init__(self, server: McpServer, spec: Any, name: str | None = None) -> None:
        self.server = server
        self.mcp_server = server.name
        self.remote_name = spec.name
        self.name = name or tool_name(server.name, spec.name)  # type: ignore[misc]
        self.description = (spec.description or spec.title or spec.name)[:1024]  # type: ignore[misc]
        schema = dict(spec.input_schema or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        self.input_schema = schema
        self.claims_read_only = bool(spec.annotations and spec.annotations.read_only_hint)
        listed = set(getattr(server.settings, "read_only_tools", None) or ())
        self.kind = "read" if spec.name in listed or "*" in listed else "network"  # type: ignore[misc]

    def available(self, workspace: Any) -> bool:
        return self.server.state == "running" and self.remote_name in self.server.tool_names

    def unavailable_reason(self) -> str:
        """Why the tool is withdrawn, naming its server (said to the model and shown with the call)."""
        if self.server.state != "running":
            return f"MCP server {self.server.name} is not running: {self.server.message or self.server.state}"
        return f"MCP server {self.server.name} no longer offers {self.remote_name}"

    async def prepare(self, args: McpArgs, ctx: ToolContext) -> Proposal:
        shown = json.dumps(args.model_dump(), ensure_ascii=False)[:300]
        # The address shown where a web request shows its URL: which server and tool will act.
        where = self.server.settings.url or f"mcp://{self.server.name}/{self.remote_name}"
        return Proposal(summary=f"MCP server {self.server.name}: {self.remote_name} {shown}", url=where)

    async def run(self, args: McpArgs, ctx: ToolContext) -> str:
        return await self.server.call(self.remote_name, args.model_dump())


class McpServer:
    def __init__(self, name: str, settings: Any, on_change: Callable[[McpServer], None]) -> None:
        self.name = name
        self.settings = settings
        self.on_change = on_change
        self.state = "stopped"  # starting, running, failed, stopped
        self.message = ""
        self.tools: list[Any] = []
        self.session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._finish = asyncio.Event()
        self._log = paths.cache_dir() / "mcp" / f"{NAME_RE.sub('_', name)}.log"

    @property
    def tool_names(self) -> set[str]:
        return {t.name for t in self.tools}

    async def start(self) -> None:
        self.state = "starting"
        self._task = asyncio.create_task(self._serve(), name=f"mcp-{self.name}")
        try:
            async with asyncio.timeout(self.settings.timeout):
                await self._ready.wait()
        except TimeoutError:
            self._fail(f"did not start within {self.settings.timeout:g} s")
            await _cancel(self._task)

    async def _serve(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(await self._transport(stack))
                inner = await self._pumped(stack, read)
                from mcp import ClientSession

                self.session = await stack.enter_async_context(ClientSession(inner, write))
                await self.session.initialize()
                listed = await self.session.list_tools()
                self.tools, self.state = list(listed.tools), "running"
                self._ready.set()
                self.on_change(self)
                await self._finish.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken server is reported, never raised
            self._fail(_describe(exc) + self._stderr_tail())
        finally:
            self.session = None
            self._ready.set()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        if self.settings.url:
            from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

            client = await stack.enter_async_context(create_mcp_http_client(headers=self.settings.headers or None))
            return streamable_http_client(self.settings.url, http_client=client)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        paths.private_dir(self._log.parent)  # 0700 up to the cache folder; the log 0600 (it may hold secrets)
        fd = paths.open_private(self._log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        errlog = stack.enter_context(os.fdopen(fd, "w", encoding="utf-8"))
        params = StdioServerParameters(command=self.settings.command, args=self.settings.args,
                                       env=self.settings.env or None)
        return stdio_client(params, errlog=errlog)

    async def _pumped(self, stack: AsyncExitStack, read: Any) -> Any:
        """The server's messages through a stream of ours, so that its end is noticed at once."""
        import anyio

        send, receive = anyio.create_memory_object_stream(16)

        async def pump() -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(item)
            except Exception:  # noqa: BLE001 - the connection broke: same as its end
                pass
            if not self._finish.is_set():
                self._fail("the server stopped" + self._stderr_tail())

        task = asyncio.create_task(pump(), name=f"mcp-{self.name}-pump")
        stack.push_async_callback(_cancel, task)
        return receive

    def _fail(self, message: str) -> None:
        was_running = self.state in ("running", "starting")
        self.state, self.message = "failed", redact(message)
        self._finish.set()
        if was_running:
            self.on_change(self)

    def _stderr_tail(self) -> str:
        try:
            lines = [line for line in self._log.read_text("utf-8", errors="replace").splitlines() if line.strip()]
        except OSError:
            return ""
        return f" (stderr: {lines[-1][:200]})" if lines else ""

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        session = self.session
        if session is None or self.state != "running":
            raise ToolError(f"MCP server {self.name} is not running ({self.message or self.state})")
        call = asyncio.ensure_future(session.call_tool(tool, arguments))
        gone = asyncio.ensure_future(self._finish.wait())
        try:
            done, _ = await asyncio.wait({call, gone}, timeout=CALL_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not call.done():
                call.cancel()
        if call not in done:
            why = self.message if self._finish.is_set() else f"no answer within {CALL_TIMEOUT:g} s"
            raise ToolError(f"MCP server {self.name}: {tool} failed: {why}")
        try:
            result = call.result()
        except Exception as exc:  # noqa: BLE001 - protocol errors go back to the model
            raise ToolError(f"MCP server {self.name}: {tool} failed: {_describe(exc)}") from None
        return render_result(result)

    async def stop(self) -> None:
        if self.state in ("running", "starting"):
            self.state = "stopped"
        self._finish.set()
        await self._end_task()

    async def _end_task(self) -> None:
        if self._task is None:
            return
        try:
            async with asyncio.timeout(5):
                await asyncio.shield(self._task)
        except (TimeoutError, Exception):  # noqa: BLE001 - stopping anyway
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions[:3])
    if isinstance(exc, FileNotFoundError):
        return f"cannot start it: {exc.strerror}: {exc.filename}"
    text = str(exc).strip() or type(exc).__name__
    return redact(text.splitlines()[0][:300])


def render_result(result: Any) -> str:
    """A tool result as text for the model: text as is, images and other data as notes."""
    parts: list[str] = []
    for item in getattr(result, "content", None) or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind in ("image", "audio"):
            size = len(getattr(item, "data", "") or "") * 3 // 4
            parts.append(f"[{kind} ({item.mime_type}, about {size:,} bytes) not shown: this agent reads text only]")
        elif kind == "resource":
            resource = item.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[binary resource {resource.uri} not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {item.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content not shown]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(parts) or "(no output)"
    if getattr(result, "is_error", False):
        raise ToolError(text)
    return text


class McpManager:
    """The configured servers of a session: started once, concurrently; their tools; stopping."""

    def __init__(self, servers: dict[str, Any], emit: Callable[[Any], None]) -> None:
        self.emit = emit
        self.servers = [McpServer(name, s, self._changed) for name, s in servers.items() if s.enabled]
        for server in self.servers:  # keys given to servers are masked wherever they could show
            for key, value in {**server.settings.env, **server.settings.headers}.items():
                if SECRET_NAME.search(key) and value:
                    register(value)
        self._started = False
        self._tools: dict[str, McpTool] = {}

    async def ensure_started(self) -> None:
        if self._started or not self.servers:
            return
        self._started = True
        await asyncio.gather(*(server.start() for server in self.servers))

    def tools(self) -> list[McpTool]:
        known = {(t.mcp_server, t.remote_name) for t in self._tools.values()}
        new = [(server, spec) for server in self.servers for spec in server.tools
               if (server.name, spec.name) not in known]
        # names valid as they are keep them; a cleaned name that clashes gets the hash
        new.sort(key=lambda pair: not NAME_OK.match(f"mcp__{pair[0].name}__{pair[1].name}"))
        for server, spec in new:
            if (server.name, spec.name) not in known:
                name = tool_name(server.name, spec.name, set(self._tools))
                self._tools[name] = McpTool(server, spec, name)
                known.add((server.name, spec.name))
        return list(self._tools.values())

    def _changed(self, server: McpServer) -> None:
        names = sorted(t.name for t in self.tools() if t.mcp_server == server.name)
        if server.state == "running":
            self.emit(McpServerState(server=server.name, state="running", tools=names))
            return
        self.emit(McpServerState(server=server.name, state="failed", message=server.message))
        withdrawn = f"; its tools are withdrawn ({', '.join(names)})" if names and server.tools else ""
        self.emit(ErrorEvent(message=f"MCP server {server.name}: {server.message}{withdrawn}", recoverable=True))

    async def close(self) -> None:
        await asyncio.gather(*(server.stop() for server in self.servers), return_exceptions=True)


def allowed_servers(config: Any) -> tuple[dict[str, Any], list[str]]:
    """The configured servers a session may start, and notes on those it may not: servers from the
    workspace's `.coder-tui.toml` run programs the repository chose, so they need a trusted folder."""
    kept, notes = {}, []
    for name, server in config.mcp_servers.items():
        source = config.sources.get(f"mcp_servers.{name}", "")
        if source.endswith(".coder-tui.toml") and not config.workspace_trusted:
            notes.append(f"{source}: MCP server {name} ignored (the folder is not trusted)")
            continue
        kept[name] = server
    return kept, notes
