"""One running language server, spoken to through pygls' client and the protocol's own types.

`LspClient.start` spawns the server in the workspace folder and initializes it; every wait has a
deadline (`ServerFailed` when it passes, or when the server exits), so a server that hangs or
crashes costs a turn seconds, never the turn. Documents are synced whole (open, then full-text
changes); `diagnostics` waits for the server to publish for the version sent, then for it to
settle. Requests the server makes of us are answered: its settings (workspace/configuration),
capability registrations and progress tokens are accepted; edits it would apply itself
(workspace/applyEdit) are refused, since every edit goes through the agent's approval.

Imported only when a server first starts: pygls and lsprotocol cost tens of milliseconds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import BaseLanguageClient

from agent import __version__
from agent.lsp.servers import ServerSpec
from agent.secrets import SECRET_NAME

T = TypeVar("T")
SETTLE = 0.3  # seconds without a newer publication before diagnostics count as final
STDERR_TAIL = 2000
MAX_TIMEOUTS = 2  # requests in a row without an answer in time before the server counts as hung
logging.getLogger("pygls").addHandler(logging.NullHandler())  # its warnings never reach a terminal
logging.getLogger("pygls").propagate = False


class ServerFailed(Exception):
    """The server did not start, stopped answering, or exited; the message says which and why."""


def capabilities() -> lsp.ClientCapabilities:
    text = lsp.TextDocumentClientCapabilities(
        synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
        definition=lsp.DefinitionClientCapabilities(link_support=False),
        references=lsp.ReferenceClientCapabilities(),
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.PlainText, lsp.MarkupKind.Markdown]),
        signature_help=lsp.SignatureHelpClientCapabilities(),
        document_symbol=lsp.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
        rename=lsp.RenameClientCapabilities(prepare_support=False),
    )
    workspace = lsp.WorkspaceClientCapabilities(
        configuration=True, workspace_folders=True, symbol=lsp.WorkspaceSymbolClientCapabilities(),
        workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True),
    )
    return lsp.ClientCapabilities(text_document=text, workspace=workspace,
                                  window=lsp.WindowClientCapabilities(work_done_progress=True))


class _Client(BaseLanguageClient):
    def __init__(self, owner: LspClient) -> None:
        super().__init__("coder-tui", __version__)
        self.owner = owner

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        await self.owner.exited(server.returncode)


class LspClient:
    def __init__(self, spec: ServerSpec, command: list[str], root: Path) -> None:
        self.spec, self.command, self.root = spec, command, root
        self.timeout = spec.timeout
        self.client = _Client(self)
        self.failure: str | None = None  # why it stopped serving
        self.timeouts = 0  # requests in a row that got no answer in time
        self.capabilities: lsp.ServerCapabilities | None = None
        self.versions: dict[str, int] = {}  # uri -> the version sent
        self.texts: dict[str, str] = {}  # uri -> the text sent
        self.paths: dict[str, str] = {}  # uri -> its path in the workspace, oldest opened first
        self.published: dict[str, tuple[int | None, list[lsp.Diagnostic]]] = {}
        self._counts: dict[str, int] = {}  # uri -> publications received
        self._news = asyncio.Condition()
        self._stderr = b""
        self._register()

    # -- the server's side ------------------------------------------------------------------
    def _register(self) -> None:
        client = self.client

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = (params.version, list(params.diagnostics))
            self._counts[params.uri] = self._counts.get(params.uri, 0) + 1
            async with self._news:
                self._news.notify_all()

        @client.feature(lsp.WORKSPACE_CONFIGURATION)
        def configuration(params: lsp.ConfigurationParams) -> list[Any]:
            return [self._setting(item.section) for item in params.items]

        @client.feature(lsp.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="edits go through the agent's approval")

        for method in (lsp.CLIENT_REGISTER_CAPABILITY, lsp.CLIENT_UNREGISTER_CAPABILITY,
                       lsp.WINDOW_WORK_DONE_PROGRESS_CREATE, lsp.WINDOW_SHOW_MESSAGE_REQUEST):
            client.feature(method)(lambda params: None)
        for method in (lsp.WINDOW_LOG_MESSAGE, lsp.WINDOW_SHOW_MESSAGE, lsp.PROGRESS, lsp.TELEMETRY_EVENT,
                       "$/typescriptVersion"):
            client.feature(method)(lambda params: None)

    def _setting(self, section: str | None) -> Any:
        value: Any = self.spec.settings
        for part in (section or "").split(".") if section else []:
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def alive(self) -> bool:
        """Serving: not failed, and its process has not exited (pygls may not have noticed yet)."""
        process = self.client._server
        if self.failure is None and process is not None and process.returncode is not None:
            self.failure = f"{self.spec.label} exited (code {process.returncode})"
        return self.failure is None

    async def exited(self, code: int | None) -> None:
        if self.failure is None:
            await asyncio.sleep(0.05)  # the last of its stderr, for the reason
            tail = self._stderr.decode("utf-8", "replace").strip().splitlines()
            said = f": {tail[-1][:200]}" if tail else ""
            self.failure = f"{self.spec.label} exited (code {code}){said}"
        async with self._news:  # a wait for its diagnostics ends now
            self._news.notify_all()

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        try:
            # its own process group (stopped whole), and the environment without a variable named like a secret
            env = {key: value for key, value in os.environ.items() if not SECRET_NAME.search(key)}
            await self.client.start_io(*self.command, cwd=str(self.root), env=env, start_new_session=True)
        except OSError as exc:
            raise ServerFailed(f"{self.command[0]} could not start: {exc.strerror or exc}") from None
        process = self.client._server
        if process is not None and process.stderr is not None:
            self.client._async_tasks.append(asyncio.ensure_future(self._drain(process.stderr)))
        uri = self.root.as_uri()
        params = lsp.InitializeParams(
            capabilities=capabilities(), process_id=os.getpid(), root_uri=uri, root_path=str(self.root),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri, name=self.root.name or "workspace")],
            initialization_options=self.spec.init_options or None,
            client_info=lsp.ClientInfo(name="coder-tui", version=__version__))
        result = await self.wait(self.client.initialize_async(params), "to start")
        self.capabilities = result.capabilities
        self.client.initialized(lsp.InitializedParams())
        if self.spec.settings:
            self.client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=self.spec.settings))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(4096):
            self._stderr = (self._stderr + chunk)[-STDERR_TAIL:]

    async def wait(self, awaitable: Any, what: str) -> Any:
        """The answer, or ServerFailed when the server exits or does not answer within its timeout."""
        if self.failure is not None:
            raise ServerFailed(self.failure)
        try:
            answer = await asyncio.wait_for(awaitable, self.timeout)
            self.timeouts = 0
            return answer
        except asyncio.TimeoutError:
            said = f"{self.spec.label} did not answer {what} within {self.timeout:g} s"
            self.timeouts += 1
            if self.capabilities is not None and self.timeouts < MAX_TIMEOUTS:  # one slow request is not a hung server
                raise ServerFailed(said) from None
            self.failure = said
        except RuntimeError as exc:  # pygls: the server exited, or the client was stopped
            self.failure = self.failure or f"{self.spec.label} stopped: {exc}"
        except Exception as exc:  # noqa: BLE001 - an error answer: this request failed, not the server
            raise ServerFailed(f"{self.spec.label} could not answer {what}: {exc}") from None
        raise ServerFailed(self.failure)

    async def stop(self) -> None:
        """shutdown and exit, each given a second; then the process (and its children) is killed."""
        process = self.client._server
        if self.failure is None and process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(self.client.shutdown_async(None), 1.0)
                self.client.exit(None)
                await asyncio.wait_for(process.wait(), 1.0)
            except Exception:  # noqa: BLE001 - a server that will not stop is killed below
                pass
        self.failure = self.failure or "stopped"
        self.client._stop_event.set()
        if process is not None:  # its group: what it started (tsserver, pyright's workers) goes too
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            await process.wait()
        for task in self.client._async_tasks:
            task.cancel()
        await asyncio.gather(*self.client._async_tasks, return_exceptions=True)

    # -- documents ----------------------------------------------------------------------------
    def uri(self, path: str) -> str:
        return (self.root / path).as_uri()

    def sync(self, path: str, text: str) -> int:
        """Tell the server the document's text (open it, or a whole-text change); its version."""
        if self.failure is not None:
            raise ServerFailed(self.failure)
        uri = self.uri(path)
        if uri in self.versions:
            if self.texts[uri] == text:
                return self.versions[uri]
            version = self.versions[uri] = self.versions[uri] + 1
            self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(version=version, uri=uri),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
        else:
            version = self.versions[uri] = 1
            self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=uri, language_id=self.spec.language_of(path), version=1, text=text)))
        self.texts[uri], self.paths[uri] = text, path
        return version

    def close_document(self, path: str) -> None:
        uri = self.uri(path)
        if uri in self.versions and self.failure is None:
            del self.versions[uri], self.texts[uri], self.paths[uri]
            self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri)))

    def published_count(self, path: str) -> int:
        return self._counts.get(self.uri(path), 0)

    async def diagnostics(self, path: str, version: int, before: int, wait: float) -> list[lsp.Diagnostic] | None:
        """The diagnostics published for `version` (after `before` publications), once they settle;
        None when none came within `wait` seconds."""
        uri, loop = self.uri(path), asyncio.get_running_loop()
        deadline = loop.time() + wait

        def fresh() -> bool:
            got = self.published.get(uri)
            return self._counts.get(uri, 0) > before and got is not None and (got[0] is None or got[0] >= version)

        async with self._news:
            while not fresh() and self.failure is None:
                if not await self._until(deadline):
                    return None
            if self.failure is not None:  # it exited while we waited: what it said before is not about this text
                return None
            seen, quiet = self._counts.get(uri, 0), loop.time() + SETTLE
            while self.failure is None:  # later publications for the same text replace it (pyright sends two)
                if not await self._until(min(deadline, quiet)):
                    break
                if self._counts[uri] != seen:
                    seen, quiet = self._counts[uri], loop.time() + SETTLE
        return self.published[uri][1] if uri in self.published else None

    async def _until(self, deadline: float) -> bool:
        """Wait for a publication until `deadline` (the condition's lock held); False when it passed."""
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return False
        try:
            await asyncio.wait_for(self._news.wait(), left)
        except asyncio.TimeoutError:
            return False
        return True
