"""Code navigation through the session's language servers (agent/lsp): lsp_diagnostics,
lsp_definition, lsp_references, lsp_hover, lsp_symbols, and lsp_rename (an edit like any other:
diff, approval, checkpoint, undo).

A symbol is named the way the model sees it: its file, the 1-based line it is on (as read_file
numbers lines) and its name on that line. The tools are offered only where a server can answer:
a folder on disk with a server installed for at least one language.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from agent.diffing import FileChange
from agent.lsp import manager_of
from agent.lsp.manager import LspManager, Unavailable
from agent.lsp.report import python_index, render_diagnostics, utf16_column
from agent.tools.base import EditArgs, EditTool, Tool, ToolArgs, ToolContext, ToolError
from agent.workspaces.base import Workspace

MAX_LOCATIONS = 100
MAX_HOVER = 4000


def _manager(ctx: ToolContext) -> LspManager:
    found = manager_of(ctx.workspace)
    if found is None:
        raise ToolError("language servers need a folder on disk; this workspace has none")
    return found


class _LspTool(Tool):
    def available(self, workspace: Workspace) -> bool:
        found = manager_of(workspace)
        return found is not None and found.available()


class FileArgs(ToolArgs):
    file_path: str = Field(description="Path of the file, relative to the workspace root.")


class SymbolArgs(FileArgs):
    line: int = Field(ge=1, description="The 1-based line the symbol is on, as read_file numbers lines.")
    symbol: str = Field(min_length=1, description="The symbol's name as written on that line.")
    occurrence: int = Field(default=1, ge=1, description="Which occurrence of the name on the line (1: the first).")


async def position(ctx: ToolContext, args: SymbolArgs) -> tuple[str, Any]:
    """The workspace path and the LSP position of the named symbol (ToolError when it is not there)."""
    from lsprotocol import types as lsp

    path = ctx.workspace.normalize(args.file_path)
    lines = (await ctx.workspace.read_text(path)).split("\n")
    if args.line > len(lines):
        raise ToolError(f"{path} has {len(lines)} lines; line {args.line} does not exist")
    text = lines[args.line - 1]
    found = [m.start() for m in re.finditer(rf"(?<!\w){re.escape(args.symbol)}(?!\w)", text)] or \
        [m.start() for m in re.finditer(re.escape(args.symbol), text)]
    if len(found) < args.occurrence:
        raise ToolError(f"{args.symbol!r} is not on line {args.line} of {path}"
                        f"{'' if not found else f' {args.occurrence} times'}; the line reads: {text.strip()[:200]!r}")
    return path, lsp.Position(line=args.line - 1, character=utf16_column(text, found[args.occurrence - 1]))


async def ask(ctx: ToolContext, path: str, call: Any, what: str) -> Any:
    try:
        return await _manager(ctx).request(path, call, what)
    except Unavailable as exc:
        raise ToolError(f"no language server answered for {path}: {exc}") from None


async def where(ctx: ToolContext, uri: str, start: Any) -> str:
    """`path:line:column  the line's text` for a location (paths outside the workspace in full)."""
    from urllib.parse import unquote, urlparse

    root = ctx.workspace.root
    absolute = unquote(urlparse(uri).path)
    rel = absolute
    if root is not None and absolute.startswith(str(root).rstrip("/") + "/"):
        rel = absolute[len(str(root).rstrip("/")) + 1:]
    try:
        text = (await ctx.workspace.read_text(rel)).split("\n")[start.line] if rel != absolute else ""
    except (Exception,):  # noqa: BLE001 - a location the workspace cannot read still has its place
        text = ""
    column = python_index(text, start.character) + 1 if text else start.character + 1
    return f"{rel}:{start.line + 1}:{column}" + (f"  {text.strip()[:160]}" if text.strip() else "")


async def locations(ctx: ToolContext, found: Any) -> list[str]:
    items = list(found) if isinstance(found, (list, tuple)) else [found] if found else []
    lines = []
    for item in items[:MAX_LOCATIONS]:
        uri = getattr(item, "uri", None) or item.target_uri
        start = (getattr(item, "range", None) or item.target_selection_range).start
        lines.append(await where(ctx, uri, start))
    if len(items) > MAX_LOCATIONS:
        lines.append(f"[{len(items) - MAX_LOCATIONS} more not shown]")
    return lines


class LspDiagnostics(_LspTool):
    name = "lsp_diagnostics"
    description = ("The errors and warnings the language server reports in a file now (edits report them "
                   "by themselves; use this after a shell command changed files, or before editing).")
    Args = FileArgs

    async def run(self, args: FileArgs, ctx: ToolContext) -> str:
        path = ctx.workspace.normalize(args.file_path)
        manager = _manager(ctx)
        if manager.spec_for(path) is None:
            raise ToolError(f"no language server is configured for {path}")
        found = await manager.diagnose([path])
        if path not in found:
            raise ToolError(f"the language server for {path} gave no diagnostics (see the session's warnings)")
        return render_diagnostics(found)


class LspDefinition(_LspTool):
    name = "lsp_definition"
    description = "Where a symbol is defined (follows imports across files), from the language server."
    Args = SymbolArgs
    examples = ({"file_path": "src/app.py", "line": 12, "symbol": "load_config"},)

    async def run(self, args: SymbolArgs, ctx: ToolContext) -> str:
        from lsprotocol import types as lsp

        path, pos = await position(ctx, args)
        params = lsp.DefinitionParams(text_document=_document(ctx, path), position=pos)
        found = await locations(ctx, await ask(ctx, path, lambda c: c.client.text_document_definition_async(params),
                                               "a definition request"))
        return f"{args.symbol} is defined at:\n" + "\n".join(found) if found else f"No definition found for {args.symbol}."


class ReferencesArgs(SymbolArgs):
    include_declaration: bool = Field(default=True, description="List the definition itself too.")


class LspReferences(_LspTool):
    name = "lsp_references"
    description = "Every use of a symbol across the project, from the language server (not a text search)."
    Args = ReferencesArgs

    async def run(self, args: ReferencesArgs, ctx: ToolContext) -> str:
        from lsprotocol import types as lsp

        path, pos = await position(ctx, args)
        params = lsp.ReferenceParams(
            text_document=_document(ctx, path), position=pos,
            context=lsp.ReferenceContext(include_declaration=args.include_declaration))
        found = await locations(ctx, await ask(ctx, path, lambda c: c.client.text_document_references_async(params),
                                               "a references request"))
        if not found:
            return f"No references found for {args.symbol}."
        return f"{len(found)} reference(s) to {args.symbol}:\n" + "\n".join(found)


class LspHover(_LspTool):
    name = "lsp_hover"
    description = "A symbol's type, signature and documentation, as an editor shows on hover."
    Args = SymbolArgs

    async def run(self, args: SymbolArgs, ctx: ToolContext) -> str:
        from lsprotocol import types as lsp

        path, pos = await position(ctx, args)
        params = lsp.HoverParams(text_document=_document(ctx, path), position=pos)
        hover = await ask(ctx, path, lambda c: c.client.text_document_hover_async(params), "a hover request")
        text = _hover_text(hover.contents).strip() if hover is not None else ""
        if not text:
            return f"The language server has nothing to say about {args.symbol} there."
        return text if len(text) <= MAX_HOVER else text[:MAX_HOVER] + "\n[… cut …]"


def _hover_text(contents: Any) -> str:
    if isinstance(contents, list):
        return "\n\n".join(_hover_text(item) for item in contents)
    if isinstance(contents, str):
        return contents
    return str(getattr(contents, "value", contents))


class SymbolsArgs(ToolArgs):
    file_path: str = Field(default="", description="A file: list its symbols (classes, functions, ...).")
    query: str = Field(default="", description="Without file_path: search the whole project's symbols by name.")


class LspSymbols(_LspTool):
    name = "lsp_symbols"
    description = ("The symbols of a file as an outline (with file_path), or the project's symbols whose "
                   "name matches `query` (workspace symbols), with their lines.")
    Args = SymbolsArgs

    async def run(self, args: SymbolsArgs, ctx: ToolContext) -> str:
        from lsprotocol import types as lsp

        if args.file_path:
            path = ctx.workspace.normalize(args.file_path)
            params = lsp.DocumentSymbolParams(text_document=_document(ctx, path))
            found = await ask(ctx, path, lambda c: c.client.text_document_document_symbol_async(params),
                              "a document symbols request")
            return "\n".join(_outline(found or [])) or f"No symbols in {path}."
        if not args.query.strip():
            raise ToolError("give file_path (a file's outline) or query (the project's symbols by name)")
        anchor = _anchor(ctx)
        found = await ask(ctx, anchor, lambda c: c.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=args.query)),
                          "a workspace symbols request")
        rows = []
        for symbol in (found or [])[:MAX_LOCATIONS]:
            start = getattr(symbol.location, "range", None)
            place = await where(ctx, symbol.location.uri, start) if start else symbol.location.uri
            rows.append(f"{lsp.SymbolKind(symbol.kind).name.lower()} {symbol.name}  {place.split('  ')[0]}")
        return "\n".join(rows) or f"No symbols match {args.query!r}."


def _outline(symbols: list[Any], depth: int = 0) -> list[str]:
    from lsprotocol import types as lsp

    rows = []
    for symbol in symbols:
        start = (getattr(symbol, "range", None) or symbol.location.range).start
        rows.append(f"{'  ' * depth}{lsp.SymbolKind(symbol.kind).name.lower()} {symbol.name}  (line {start.line + 1})")
        rows += _outline(getattr(symbol, "children", None) or [], depth + 1)
    return rows


def _anchor(ctx: ToolContext) -> str:
    """A file a workspace-wide question is asked through: the first one a running server has open."""
    manager = _manager(ctx)
    for client in manager.running():
        for path in client.paths.values():
            return path
    raise ToolError("workspace symbols need a language server that is running: read or check a file of the "
                    "language first (lsp_symbols with file_path, or lsp_diagnostics)")


def _document(ctx: ToolContext, path: str) -> Any:
    from lsprotocol import types as lsp

    assert ctx.workspace.root is not None  # the tools are offered for folders on disk only
    return lsp.TextDocumentIdentifier(uri=(ctx.workspace.root / path).as_uri())


class RenameArgs(SymbolArgs, EditArgs):
    new_name: str = Field(min_length=1, description="The symbol's new name.")


class LspRename(EditTool):
    name = "lsp_rename"
    description = ("Rename a symbol everywhere it is used, as the language server resolves it (not a text "
                   "replace). Shown as a diff of every file it changes, for approval.")
    Args = RenameArgs

    def available(self, workspace: Workspace) -> bool:
        found = manager_of(workspace)
        return found is not None and found.available()

    async def plan(self, args: RenameArgs, ctx: ToolContext) -> list[FileChange]:
        from lsprotocol import types as lsp

        path, pos = await position(ctx, args)
        params = lsp.RenameParams(text_document=_document(ctx, path), position=pos,
                                  new_name=args.new_name)
        edit = await ask(ctx, path, lambda c: c.client.text_document_rename_async(params), "a rename request")
        from agent.tools.lspedit import file_changes

        changes = await file_changes(ctx.workspace, edit, f"rename {args.symbol} to {args.new_name}")
        if not changes:
            raise ToolError(f"the language server found nothing to rename for {args.symbol} on line {args.line}")
        return changes


LSP_TOOLS: list[type[Tool]] = [LspDiagnostics, LspDefinition, LspReferences, LspHover, LspSymbols, LspRename]
