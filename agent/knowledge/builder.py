"""Building and refreshing a workspace's map: structure and symbols, then summaries file by file.

`refresh()` brings the file list up to date (new and changed files re-read and parsed where the
text is at hand, deleted ones dropped). `pending()` lists what still lacks a summary, most
referenced first; `summarise_one(path)` reads, parses and summarises one file and commits it.
`build()` does all of it with progress events and an optional cost ceiling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.events import MapPlan, MapProgress
from agent.knowledge.languages import worth_summary
from agent.knowledge.rank import ranked_paths
from agent.knowledge.source import MAX_TEXT_BYTES, MapSource, source_for
from agent.knowledge.store import FileRecord, MapStore
from agent.knowledge.summarize import SummaryError, estimate, summarise
from agent.knowledge.symbols import parse_symbols
from agent.llm import LLM, LLMError
from agent.workspaces.base import Workspace, WorkspaceError

Emit = Callable[[MapProgress | MapPlan], None]


@dataclass
class RefreshReport:
    files: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    parsed: int = 0


@dataclass
class BuildReport:
    refresh: RefreshReport
    planned: int = 0
    summarised: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    cost: float | None = None
    stopped: str | None = None  # why the build ended before every planned summary

    def to_json(self) -> dict[str, Any]:
        r = self.refresh
        return {"type": "map_done", "files": r.files, "added": len(r.added), "changed": len(r.changed),
                "removed": len(r.removed), "parsed": r.parsed, "planned": self.planned,
                "summarised": len(self.summarised), "failed": self.failed, "cost": self.cost,
                "stopped": self.stopped}


class MapBuilder:
    def __init__(self, workspace: Workspace, llm: LLM | None = None, emit: Emit | None = None,
                 source: MapSource | None = None) -> None:
        self.source = source or source_for(workspace)
        self.store = MapStore(self.source.key)
        self.llm = llm
        self.emit = emit or (lambda event: None)

    def close(self) -> None:
        self.store.close()

    # -- structure ------------------------------------------------------------------------------
    async def refresh(self) -> RefreshReport:
        known = self.store.files()
        listing = await self.source.listing(known)
        report = RefreshReport(files=len(listing.records))
        fresh: list[FileRecord] = []
        for path, record in listing.records.items():
            old = known.get(path)
            if old is record:
                continue
            (report.added if old is None else report.changed).append(path)
            if old is not None and old.sha == record.sha:  # touched, same content: keep the symbols
                record.parsed, record.defs, record.refs, record.error = old.parsed, old.defs, old.refs, old.error
            fresh.append(record)
        to_parse = [r for r in fresh if not r.parsed and (r.path in listing.texts or not r.language)]
        await asyncio.to_thread(_parse_all, to_parse, listing.texts)
        report.parsed = sum(1 for r in to_parse if r.language)
        report.changed = [p for p in report.changed if known[p].sha != listing.records[p].sha]
        report.removed = sorted(set(known) - set(listing.records))
        if fresh:
            self.store.put_files(fresh)
        if report.removed or report.changed:
            self.store.drop_files(report.removed)
        return report

    # -- summaries ------------------------------------------------------------------------------
    def pending(self, records: dict[str, FileRecord] | None = None) -> list[str]:
        """Files that still need a summary, most referenced first."""
        records = records if records is not None else self.store.files()
        done = self.store.summarised_shas()
        seen: set[str] = set()
        result = []
        for path in ranked_paths(records):
            record = records[path]
            if (record.sha in done or record.sha in seen or record.error or not worth_summary(path)
                    or record.size > MAX_TEXT_BYTES or record.size == 0):
                continue
            seen.add(record.sha)
            result.append(path)
        return result

    async def summarise_one(self, path: str) -> float | None:
        """Read, parse and summarise one file, then commit it; returns its cost."""
        assert self.llm is not None, "summaries need a model"
        record = self.store.files()[path]
        text = await self.source.read(path)
        if not record.parsed:
            await asyncio.to_thread(_parse_all, [record], {path: text})
            self.store.put_files([record])
        done = await summarise(self.llm, path, text, [s.name for s in record.defs])
        self.store.put_summary(record.sha, path, done.summary.model_dump(), self.llm.model, done.cost)
        return done.cost

    async def parse_unparsed(self) -> int:
        """Read and parse files whose symbols are unknown (GitHub without summaries)."""
        records = [r for r in self.store.files().values() if not r.parsed and r.language and not r.error]
        for index, record in enumerate(records):
            try:
                text = await self.source.read(record.path)
            except WorkspaceError as exc:
                record.error, record.parsed = str(exc), True
            else:
                await asyncio.to_thread(_parse_all, [record], {record.path: text})
            self.store.put_files([record])
            self.emit(MapProgress(phase="parse", done=index + 1, total=len(records), path=record.path))
        return len(records)

    def estimate(self, paths: list[str]) -> Any:
        records = self.store.files()
        return estimate(self.llm.model if self.llm else "", [records[p].size for p in paths])

    async def build(self, summaries: bool = True, max_cost: float | None = None) -> BuildReport:
        report = BuildReport(await self.refresh())
        if not summaries:
            if self.source.remote_reads:
                await self.parse_unparsed()
            return report
        plan = self.pending()
        report.planned = len(plan)
        guess = self.estimate(plan)
        self.emit(MapPlan(summaries=len(plan), prompt_tokens=guess.prompt_tokens,
                          completion_tokens=guess.completion_tokens, estimated_cost=guess.cost,
                          text=f"{len(plan)} file(s) to summarise with {self.llm.model if self.llm else '?'}: "
                               f"{guess.describe()}"))
        if max_cost is not None and plan and guess.cost is None:
            report.stopped = (f"--max-cost: no price is known for {self.llm.model if self.llm else 'the model'}, so "
                              "the cost cannot be tracked; nothing was summarised (run without --max-cost)")
            return report
        await self._summarise_plan(plan, report, max_cost)
        return report

    async def _summarise_plan(self, plan: list[str], report: BuildReport, max_cost: float | None) -> None:
        from agent.github.errors import BinaryFile, GitHubError, NotFound

        for index, path in enumerate(plan):
            if max_cost is not None and (report.cost or 0.0) >= max_cost:
                report.stopped = (f"--max-cost ${max_cost:g} reached (spent ${report.cost or 0:.4f}); "
                                  f"{len(plan) - index} file(s) left for the next run")
                return
            self.emit(MapProgress(phase="summarise", done=index, total=len(plan), path=path))
            try:
                cost = await self.summarise_one(path)
            except (BinaryFile, NotFound) as exc:
                report.failed[path] = str(exc)
                continue
            except GitHubError as exc:  # rate limit, permissions, network: the next files would fail too
                report.stopped = f"GitHub: {exc}"
                return
            except LLMError as exc:  # the model is unreachable or refuses: every next file would fail too
                report.stopped = f"the model failed: {exc}"
                return
            except (WorkspaceError, SummaryError) as exc:
                report.failed[path] = str(exc)
                continue
            report.summarised.append(path)
            if cost is not None:
                report.cost = (report.cost or 0.0) + cost
        self.emit(MapProgress(phase="summarise", done=len(plan), total=len(plan), path=""))


def _parse_all(records: list[FileRecord], texts: dict[str, str]) -> None:
    for record in records:
        text = texts.get(record.path)
        if record.language and text is not None:
            found = parse_symbols(text, record.language)
            record.defs, record.refs, record.error = tuple(found.defs), frozenset(found.refs), found.error
        record.parsed = True


async def current_view(workspace: Workspace) -> Any:
    """The workspace's map with its structure and symbols brought up to date (no model calls;
    on GitHub no blob requests: files not read yet appear without symbols)."""
    from agent.knowledge.view import cached_view

    builder = MapBuilder(workspace)
    try:
        await builder.refresh()
    finally:
        builder.close()
    return await asyncio.to_thread(cached_view, builder.source.key)
