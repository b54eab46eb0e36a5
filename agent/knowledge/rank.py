"""Files ranked by how much the rest of the code refers to them (Aider's repository map idea).

A file that uses a name another file defines gets an edge to it; a name defined in many files
says little about which one is meant, so its weight is shared. A small power iteration computes
PageRank over those edges; files mentioned in the conversation get the teleport weight
(personalisation), so they and what they use rank first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from agent.knowledge.store import FileRecord

DAMPING = 0.85
MAX_DEFINERS = 25  # a name defined in more files (run, get, render) says nothing about which is meant
ITERATIONS = 40
TOLERANCE = 1e-9


def reference_graph(records: Iterable[FileRecord]) -> dict[str, dict[str, float]]:
    """source file -> {file it refers to: weight}."""
    records = list(records)
    definers: dict[str, set[str]] = defaultdict(set)
    for record in records:
        for symbol in record.defs:
            definers[symbol.name].add(record.path)
    graph: dict[str, dict[str, float]] = {r.path: {} for r in records}
    for record in records:
        edges = graph[record.path]
        for name in record.refs:
            targets = definers.get(name)
            if not targets or len(targets) > MAX_DEFINERS:
                continue
            weight = (0.1 if name.startswith("_") or len(name) < 3 else 1.0) / len(targets)
            for target in targets:
                if target != record.path:
                    edges[target] = edges.get(target, 0.0) + weight
    return graph


def pagerank(graph: dict[str, dict[str, float]], personal: Iterable[str] = ()) -> dict[str, float]:
    nodes = list(graph)
    count = len(nodes)
    if not count:
        return {}
    index = {p: i for i, p in enumerate(nodes)}
    chosen = [index[p] for p in personal if p in index]
    teleport = [0.0] * count
    for i in chosen or range(count):
        teleport[i] = 1.0 / (len(chosen) or count)
    # out-edges as (target index, weight / total out-weight); a file without any is "dangling"
    edges = []
    for source, targets in graph.items():
        total = sum(targets.values())
        if total:
            edges.append((index[source], [(index[t], w / total) for t, w in targets.items()]))
    has_out = [False] * count
    for source, _ in edges:
        has_out[source] = True
    rank = [1.0 / count] * count
    for _ in range(ITERATIONS):
        dangling = sum(r for r, out in zip(rank, has_out) if not out)
        following = [0.0] * count
        for source, targets in edges:
            share = rank[source]
            for target, weight in targets:
                following[target] += share * weight
        new = [DAMPING * (f + dangling * t) + (1 - DAMPING) * t for f, t in zip(following, teleport)]
        delta = sum(abs(a - b) for a, b in zip(new, rank))
        rank = new
        if delta < TOLERANCE:
            break
    return dict(zip(nodes, rank))


def ranked_paths(records: dict[str, FileRecord], mentioned: Iterable[str] = ()) -> list[str]:
    """Every path, mentioned files first, then by rank (ties by path)."""
    mentioned = [p for p in mentioned if p in records]
    scores = pagerank(reference_graph(records.values()), mentioned)
    first = list(dict.fromkeys(mentioned))
    rest = sorted((p for p in records if p not in set(first)), key=lambda p: (-scores.get(p, 0.0), p))
    return first + rest
