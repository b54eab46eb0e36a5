"""A session's language servers: started on demand per language, reused, shut down with it.

`LspManager` knows which server serves a file (agent/lsp/servers.py), starts it the first time a
file of its language needs it, keeps the documents it was told about in step with the workspace,
and turns its answers into plain values. A server that is not installed, may not run in an
untrusted folder, fails to start, stops answering or exits is set aside for the session, and the
session is told once (a warning every front end shows); its files then simply get no
diagnostics and no navigation. Nothing here waits longer than the server's timeout.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.config import LspServerSettings
from agent.events import DiagnosticInfo, WarningEvent
from agent.lsp import servers
from agent.lsp.report import python_index
from agent.lsp.servers import ServerSpec
from agent.workspaces.base import Workspace, WorkspaceError

if TYPE_CHECKING:
    from agent.lsp.client import LspClient

MAX_OPEN = 60  # documents kept open per server; the oldest is closed past this
DIAGNOSTICS_WAIT = 10.0  # seconds an edit waits at most for a server's diagnostics (its first start aside)
SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class Unavailable(Exception):
    """No server can answer for this file; the message says why."""


class LspManager:
    def __init__(self, workspace: Workspace, root: Path, table: dict[str, LspServerSettings],
                 trusted: bool, emit: Callable[[Any], None]) -> None:
        self.workspace, self.root, self.trusted, self.emit = workspace, root, trusted, emit
        self.specs = servers.configured(table)
        self._clients: dict[str, LspClient] = {}
        self._down: dict[str, str] = {}  # server name -> why it serves nothing this session
        self._locks: dict[str, asyncio.Lock] = {}
        self._commands: dict[str, list[str] | None] = {}

    # -- which server -------------------------------------------------------------------------
    def spec_for(self, path: str) -> ServerSpec | None:
        return next((spec for spec in self.specs if spec.serves(path)), None)

    def command(self, spec: ServerSpec) -> list[str] | None:
        if spec.name not in self._commands:
            self._commands[spec.name] = servers.installed(spec)
        return self._commands[spec.name]

    def available(self) -> bool:
        """Whether any server may still answer (the navigation tools are offered only then)."""
        return any(spec.name not in self._down and self.command(spec) is not None for spec in self.specs)

    def running(self) -> list[LspClient]:
        return [client for client in self._clients.values() if client.failure is None]

    def _set_aside(self, spec: ServerSpec, why: str) -> None:
        if spec.name in self._down:
            return
        self._down[spec.name] = why
        patterns = ", ".join(spec.patterns)
        self.emit(WarningEvent(message=f"language server for {spec.name} ({patterns}): {why}; those files get no "
                                       "diagnostics or code navigation this session"))

    async def client(self, path: str) -> LspClient:
        """The running server for `path`, started on first use (Unavailable: none can answer)."""
        spec = self.spec_for(path)
        if spec is None:
            raise Unavailable(f"no language server is configured for {path}")
        if spec.name in self._down:
            raise Unavailable(f"the {spec.name} language server is off: {self._down[spec.name]}")
        lock = self._locks.setdefault(spec.name, asyncio.Lock())
        async with lock:
            running = self._clients.get(spec.name)
            if running is not None and running.alive():
                return running
            if running is not None:
                self._clients.pop(spec.name)
                await running.stop()
                self._set_aside(spec, running.failure or "it stopped")
                raise Unavailable(f"the {spec.name} language server stopped: {running.failure}")
            return await self._start(spec)

    async def _start(self, spec: ServerSpec) -> LspClient:
        command = self.command(spec)
        if command is None:
            tried = ", ".join(c[0] for c in spec.candidates)
            self._set_aside(spec, f"not installed (looked for {tried} on PATH)")
            raise Unavailable(f"no {spec.name} language server is installed")
        spec = servers.with_pinned_tsserver(spec, command[0])
        if not self.trusted and (marker := servers.untrusted_reason(spec, self.root)) is not None:
            self._set_aside(spec, f"not started: this folder is not trusted and its {marker} would make the server "
                                  "run the folder's own code (`coder-tui trust DIR` trusts it)")
            raise Unavailable(self._down[spec.name])
        # lsprotocol's types take a quarter of a second to import: not on the loop the app draws with
        await asyncio.to_thread(importlib.import_module, "agent.lsp.client")
        from agent.lsp.client import LspClient, ServerFailed

        client = LspClient(spec, command, self.root)
        try:
            await client.start()
        except ServerFailed as exc:
            await client.stop()
            self._set_aside(spec, str(exc))
            raise Unavailable(str(exc)) from None
        self._clients[spec.name] = client
        return client

    # -- documents -----------------------------------------------------------------------------
    async def synced(self, path: str) -> tuple[LspClient, int]:
        """The server for `path`, told the current text of `path` and of the other documents it has
        open (a shell command or a person may have changed them); the version of `path`."""
        client = await self.client(path)
        for other in list(client.paths.values()):
            if other != path:
                await self._sync_one(client, other)
        version = await self._sync_one(client, path)
        if version is None:
            raise Unavailable(f"{path} cannot be read")
        return client, version

    async def _sync_one(self, client: LspClient, path: str) -> int | None:
        try:
            text = await self.workspace.read_text(path)
        except WorkspaceError:
            client.close_document(path)
            return None
        if len(client.paths) >= MAX_OPEN and client.uri(path) not in client.paths:
            client.close_document(next(iter(client.paths.values())))
        return self._guard(client, lambda: client.sync(path, text))

    def _guard(self, client: LspClient, call: Callable[[], Any]) -> Any:
        from agent.lsp.client import ServerFailed

        try:
            return call()
        except (ServerFailed, RuntimeError, ConnectionError) as exc:
            client.failure = client.failure or str(exc)
            raise Unavailable(client.failure) from None

    async def diagnose(self, paths: list[str]) -> dict[str, list[DiagnosticInfo]]:
        """The diagnostics of each file a server serves, as it reports them now (files without a
        server, or whose server gave none in time, are left out)."""
        results = await asyncio.gather(*(self._diagnose_one(path) for path in paths))
        return {path: found for path, found in zip(paths, results) if found is not None}

    async def _diagnose_one(self, path: str) -> list[DiagnosticInfo] | None:
        if self.spec_for(path) is None:
            return None
        try:
            client = await self.client(path)
            before, sent = client.published_count(path), client.versions.get(client.uri(path))
            client, version = await self.synced(path)
            found: list[Any] | None = None
            if version == sent and client.uri(path) in client.published:  # the text it has: its last word stands
                found = client.published[client.uri(path)][1]
            else:
                found = await client.diagnostics(path, version, before, min(DIAGNOSTICS_WAIT, client.timeout))
        except Unavailable:
            return None
        if found is None:
            return None
        lines = client.texts.get(client.uri(path), "").split("\n")
        return [_info(d, lines) for d in found]

    async def request(self, path: str, call: Callable[[LspClient], Any], what: str) -> Any:
        """A request about `path` (after syncing it); Unavailable when no server answers."""
        from agent.lsp.client import ServerFailed

        client = await self.client(path)
        before, opened = client.published_count(path), client.uri(path) in client.versions
        client, version = await self.synced(path)
        if not opened:
            # A server answers about a document it has just been given before it knows the rest of
            # the project (pyright's first references miss other files): its first word on the
            # document says it has looked.
            await client.diagnostics(path, version, before, min(DIAGNOSTICS_WAIT, client.timeout))
        try:
            return await client.wait(call(client), what)
        except ServerFailed as exc:
            if client.failure is not None:  # it hung or exited: set aside, said once
                self._set_aside(client.spec, client.failure)
            raise Unavailable(str(exc)) from None

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(client.stop() for client in clients), return_exceptions=True)


def _info(d: Any, lines: list[str]) -> DiagnosticInfo:
    """A diagnostic with 1-based line and column (in characters, not UTF-16 units)."""
    code = "" if d.code is None else str(d.code)
    line, column = d.range.start.line, d.range.start.character
    if line < len(lines):
        column = python_index(lines[line], column)
    return DiagnosticInfo(line=line + 1, column=column + 1,
                          severity=SEVERITY.get(int(d.severity or 1), "error"),  # type: ignore[arg-type]
                          message=d.message, source=d.source or "", code=code)
