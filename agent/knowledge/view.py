"""The map as text: the system prompt's ranked, token-budgeted section, folder outlines, search.

Views are built from the store and kept per store file until it changes, so a prompt's map
section costs a ranking only when the map changed or other files are mentioned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.knowledge.rank import pagerank, reference_graph
from agent.knowledge.store import FileRecord, MapStore, knowledge_dir

CHARS_PER_TOKEN = 4
_PATHISH = re.compile(r"[\w@+.-]+(?:/[\w@+.-]+)*\.?\w*")


@dataclass
class Entry:
    path: str
    record: FileRecord
    summary: dict[str, Any] | None
    score: float


class MapView:
    def __init__(self, records: dict[str, FileRecord], summaries: dict[str, dict[str, Any]]) -> None:
        self.records = records
        self.summaries = summaries
        self._graph = reference_graph(records.values())
        self._ranks: dict[tuple[str, ...], dict[str, float]] = {}

    @classmethod
    def load(cls, key: str) -> MapView | None:
        """The stored map of a repository (None when none was built)."""
        if not (knowledge_dir(key) / "map.sqlite3").exists():
            return None
        store = MapStore(key)
        try:
            return cls(store.files(), store.summaries())
        finally:
            store.close()

    def summary(self, path: str) -> dict[str, Any] | None:
        record = self.records.get(path)
        return self.summaries.get(record.sha) if record else None

    def ranked(self, mentioned: Iterable[str] = ()) -> list[Entry]:
        first = [p for p in dict.fromkeys(mentioned) if p in self.records]
        key = tuple(first)
        if key not in self._ranks:
            if len(self._ranks) >= 8:  # conversations move on; old mentions are not asked again
                self._ranks.clear()
            self._ranks[key] = pagerank(self._graph, first)
        scores = self._ranks[key]
        chosen = set(first)
        rest = sorted((p for p in self.records if p not in chosen), key=lambda p: (-scores.get(p, 0.0), p))
        return [Entry(p, self.records[p], self.summary(p), scores.get(p, 0.0)) for p in first + rest]

    def mentioned_in(self, texts: Iterable[str]) -> list[str]:
        """Known paths (or unique file names) that appear in the texts, in order of appearance."""
        names: dict[str, str | None] = {}
        for path in self.records:
            base = path.rsplit("/", 1)[-1]
            names[base] = None if base in names else path
        found: list[str] = []
        for text in texts:
            for token in _PATHISH.findall(text):
                token = token.strip("./")
                path = token if token in self.records else names.get(token)
                if path and path not in found:
                    found.append(path)
        return found

    # -- text -----------------------------------------------------------------------------------
    def section(self, budget_tokens: int, mentioned: Iterable[str] = ()) -> str:
        """The system prompt's map: most relevant files first, cut to the token budget."""
        if budget_tokens <= 0 or not self.records:
            return ""
        head = ("## Codebase map\nFiles ranked by how much the rest of the code refers to them (files "
                "mentioned in the conversation first), with summaries and definitions. "
                "get_codebase_map(path?, query?) shows more.\n")
        budget = budget_tokens * CHARS_PER_TOKEN - len(head)
        lines: list[str] = []
        entries = self.ranked(mentioned)
        for index, entry in enumerate(entries):
            block = file_block(entry, symbols=12)
            if len(block) + 1 > budget:
                lines.append(f"[{len(entries) - index} more file(s) not shown]")
                break
            budget -= len(block) + 1
            lines.append(block)
        return head + "\n".join(lines) + "\n"

    def outline(self, path: str = "", depth: int = 2) -> str:
        """A folder's files and subfolders with descriptions (subfolders summarised by count)."""
        prefix = f"{path}/" if path else ""
        inside = [p for p in sorted(self.records) if p.startswith(prefix)]
        if path in self.records:
            return file_block(self._entry(path), symbols=60)
        if not inside:
            return f"{path or 'the workspace'}: no such file or folder in the map"
        lines: list[str] = []
        shown_dirs: set[str] = set()
        for file in inside:
            rest = file[len(prefix):].split("/")
            if len(rest) > depth:
                folder = prefix + "/".join(rest[:depth])
                if folder not in shown_dirs:
                    shown_dirs.add(folder)
                    count = sum(1 for p in inside if p.startswith(folder + "/"))
                    lines.append(f"{folder}/  ({count} file(s))")
                continue
            lines.append(file_block(self._entry(file), symbols=8))
        return "\n".join(lines)

    def search(self, query: str, limit: int = 30) -> str:
        words = [w.lower() for w in query.split() if w]
        hits: list[tuple[int, Entry]] = []
        for entry in self.ranked():
            haystack = " ".join([entry.path, *(s.name for s in entry.record.defs), *_summary_words(entry.summary)])
            lowered = haystack.lower()
            score = sum(lowered.count(w) for w in words) if all(w in lowered for w in words) else 0
            if score:
                hits.append((score, entry))
        if not hits:
            return f"no file in the map matches {query!r}"
        hits.sort(key=lambda item: -item[0])
        shown = [file_block(entry, symbols=12) for _, entry in hits[:limit]]
        more = f"\n[{len(hits) - limit} more match(es)]" if len(hits) > limit else ""
        return "\n".join(shown) + more

    def _entry(self, path: str) -> Entry:
        return Entry(path, self.records[path], self.summary(path), 0.0)

    def counts(self) -> tuple[int, int]:
        """(files, files with a summary)."""
        return len(self.records), sum(1 for r in self.records.values() if r.sha in self.summaries)


def file_block(entry: Entry, symbols: int) -> str:
    summary = entry.summary or {}
    line = entry.path
    if summary.get("description"):
        line += f" — {summary['description']}"
    if summary.get("tags"):
        line += f" [{', '.join(summary['tags'])}]"
    defs = entry.record.defs
    if defs:
        names = ", ".join(f"{s.name} ({s.kind}, line {s.line})" if symbols > 12 else s.name
                          for s in defs[:symbols])
        more = f", +{len(defs) - symbols} more" if len(defs) > symbols else ""
        line += f"\n  defines: {names}{more}"
    if symbols > 12 and summary:
        for key in ("exports", "dependencies"):
            if summary.get(key):
                line += f"\n  {key}: {', '.join(summary[key])}"
        line += f"\n  complexity: {summary.get('complexity')}; analysed {summary.get('last_analyzed')}"
    return line


def _summary_words(summary: dict[str, Any] | None) -> list[str]:
    if not summary:
        return []
    return [summary.get("description", ""), *summary.get("tags", []), *summary.get("exports", [])]


_CACHE: dict[str, tuple[tuple[int, int], MapView]] = {}


def cached_view(key: str) -> MapView | None:
    """The stored map, loaded again only when its file changed."""
    path = knowledge_dir(key) / "map.sqlite3"
    try:
        info = Path(path).stat()
    except OSError:
        return None
    stamp = (info.st_mtime_ns, info.st_size)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    view = MapView.load(key)
    if view is not None:
        _CACHE[key] = (stamp, view)
    return view
