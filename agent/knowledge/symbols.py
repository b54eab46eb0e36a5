"""Definitions and references of one source file, through tree-sitter (imported lazily).

The grammars and the bindings load on the first parse, never on the way to the first frame or
`--help`. Parsers and compiled queries are kept per language for the life of the process.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agent.knowledge.languages import QUERIES

MAX_PARSE_BYTES = 1024 * 1024  # generated or vendored giants say little about the code's structure
MAX_SYMBOLS = 400


class Symbol(NamedTuple):  # a tuple: thousands are loaded from the store for every prompt
    name: str
    kind: str  # function, class, method, type, ...
    line: int  # 1-based

    def to_json(self) -> list[Any]:
        return [self.name, self.kind, self.line]

    @staticmethod
    def from_json(value: list[Any]) -> Symbol:
        return Symbol(*value)


@dataclass
class FileSymbols:
    defs: list[Symbol] = field(default_factory=list)
    refs: set[str] = field(default_factory=set)
    error: str | None = None  # why the file could not be parsed


class _Grammars:
    """One parser and one compiled query per language (tree-sitter objects are not thread-safe)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def get(self, language: str) -> tuple[Any, Any, Any]:
        cache = self._local.__dict__.setdefault("cache", {})
        if language not in cache:
            from tree_sitter import Query, QueryCursor
            from tree_sitter_language_pack import get_language, get_parser

            query = Query(get_language(language), QUERIES[language])  # type: ignore[arg-type]
            cache[language] = (get_parser(language), query, QueryCursor)  # type: ignore[arg-type]
        return cache[language]


_GRAMMARS = _Grammars()


def parse_symbols(text: str, language: str) -> FileSymbols:
    """The file's definitions (in source order) and the names it refers to."""
    data = text.encode("utf-8", "replace")
    if len(data) > MAX_PARSE_BYTES:
        return FileSymbols(error=f"not parsed: {len(data) // 1024} KB is over the 1 MB parse limit")
    try:
        parser, query, cursor_type = _GRAMMARS.get(language)
    except (ImportError, LookupError, ValueError) as exc:
        return FileSymbols(error=f"no {language} grammar available ({exc})")
    tree = parser.parse(data)
    captures = cursor_type(query).captures(tree.root_node)
    result = FileSymbols()
    seen: set[tuple[str, int]] = set()
    for name, nodes in captures.items():
        if name == "ref":
            result.refs.update(_text(node) for node in nodes)
            continue
        kind = name.removeprefix("def.")
        for node in nodes:
            key = (_text(node), node.start_point[0] + 1)
            if key not in seen:
                seen.add(key)
                result.defs.append(Symbol(key[0], kind, key[1]))
    result.defs.sort(key=lambda s: s.line)
    del result.defs[MAX_SYMBOLS:]
    result.refs -= {s.name for s in result.defs}
    return result


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return raw.decode("utf-8", "replace").rsplit("::", 1)[-1]
