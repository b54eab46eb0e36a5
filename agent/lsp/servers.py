"""Which language server serves which file: the defaults, `[lsp.NAME]` merged over them, and the
command that is actually installed.

Defaults: Python (the first of basedpyright, pyright, python-lsp-server and jedi-language-server
found) and TypeScript/JavaScript (typescript-language-server). Commands are looked up on PATH
and in the folder of the Python that runs coder-tui (a virtual environment's bin/ need not be on
PATH). Nothing here starts a program or imports the LSP library.

A folder the user has not trusted is data, not code: a server is not started there when the
folder holds what would make it run the folder's own programs (`untrusted_markers`: a `.venv`
whose Python pyright would run to find its imports, a `node_modules/typescript` that
typescript-language-server would load in place of its own).
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent.config import LspServerSettings

DEFAULT_TIMEOUT = 30.0
PY_MARKERS = (".venv", "venv", "pyrightconfig.json", "pyproject.toml:pyright")
TS_MARKERS = ("node_modules/typescript", ".yarn/sdks/typescript", ".vscode/pnpify/typescript")
LANGUAGE_IDS = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "typescriptreact", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascriptreact", ".rs": "rust", ".go": "go", ".c": "c", ".h": "c", ".cpp": "cpp",
    ".hpp": "cpp", ".cc": "cpp", ".java": "java", ".rb": "ruby", ".lua": "lua", ".zig": "zig",
}


@dataclass(frozen=True)
class ServerSpec:
    """One language server as the session will start it."""

    name: str
    candidates: tuple[tuple[str, ...], ...]  # commands to try, the first installed wins
    patterns: tuple[str, ...]
    language_id: str | None = None
    init_options: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    untrusted_markers: tuple[str, ...] = ()

    def serves(self, path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(path, p) for p in self.patterns)

    def language_of(self, path: str) -> str:
        return self.language_id or LANGUAGE_IDS.get(os.path.splitext(path)[1].lower(), self.name)

    @property
    def label(self) -> str:
        return self.candidates[0][0] if len(self.candidates) == 1 else self.name


DEFAULTS: dict[str, ServerSpec] = {
    "python": ServerSpec(
        "python",
        (("basedpyright-langserver", "--stdio"), ("pyright-langserver", "--stdio"), ("pylsp",),
         ("jedi-language-server",)),
        ("*.py", "*.pyi"), untrusted_markers=PY_MARKERS),
    "typescript": ServerSpec(
        "typescript", (("typescript-language-server", "--stdio"),),
        ("*.ts", "*.tsx", "*.mts", "*.cts", "*.js", "*.jsx", "*.mjs", "*.cjs"), untrusted_markers=TS_MARKERS),
}


def configured(table: dict[str, LspServerSettings]) -> list[ServerSpec]:
    """The defaults with `[lsp.NAME]` merged over them (a disabled one left out), then the added ones."""
    specs: list[ServerSpec] = []
    for name in [*DEFAULTS, *(n for n in table if n not in DEFAULTS)]:
        given = table.get(name)
        if given is not None and not given.enabled:
            continue
        spec = DEFAULTS.get(name) or ServerSpec(name, (), ())
        if given is not None:
            spec = _merged(spec, given)
        if spec.candidates and spec.patterns:
            specs.append(spec)
    return specs


def _merged(spec: ServerSpec, given: LspServerSettings) -> ServerSpec:
    changes: dict[str, Any] = {}
    if given.command:
        # A command of the user's own is what runs: the default's guard does not apply to it
        changes.update(candidates=(tuple(given.command),), untrusted_markers=())
    if given.patterns is not None:
        changes["patterns"] = tuple(given.patterns)
    for key in ("language_id", "init_options", "settings", "timeout"):
        if getattr(given, key) is not None:
            changes[key] = getattr(given, key)
    return replace(spec, **changes)


def search_path() -> str:
    """PATH, then the folder of the Python running coder-tui (its venv's bin/ holds basedpyright)."""
    here = os.path.dirname(sys.executable)
    return os.pathsep.join(p for p in (os.environ.get("PATH", ""), here) if p)


def installed(spec: ServerSpec) -> list[str] | None:
    """The first candidate command that is installed, with its program's full path (None: none is)."""
    where = search_path()
    for command in spec.candidates:
        program = shutil.which(command[0], path=where)
        if program is not None:
            return [program, *command[1:]]
    return None


def tsserver_beside(program: str) -> str | None:
    """The tsserver.js of the `typescript` package installed beside typescript-language-server."""
    real = Path(os.path.realpath(program))
    for folder in real.parents:
        candidate = folder / "typescript" / "lib" / "tsserver.js"
        if folder.name == "node_modules" and candidate.is_file():
            return str(candidate)
    return None


def with_pinned_tsserver(spec: ServerSpec, program: str) -> ServerSpec:
    """typescript-language-server told to use its own TypeScript, never the folder's."""
    found = tsserver_beside(program)
    if spec.name != "typescript" or found is None or "tsserver" in spec.init_options:
        return spec
    options = {**spec.init_options, "tsserver": {"path": found}}
    return replace(spec, init_options=options, untrusted_markers=())


def untrusted_reason(spec: ServerSpec, root: Path) -> str | None:
    """What in an untrusted folder would make this server run the folder's own code (None: nothing)."""
    for marker in spec.untrusted_markers:
        path, _, needle = marker.partition(":")
        target = root / path
        try:
            if not target.exists():
                continue
            if needle and needle not in target.read_text("utf-8", errors="replace"):
                continue
        except OSError:
            continue
        return f"{path}" + (f" (its {needle} settings)" if needle else "")
    return None
