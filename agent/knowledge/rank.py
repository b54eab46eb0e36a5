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
            if not targets:
                continue
            weight = (0.1 if name.startswith("_") or len(name) < 3 else 1.0) / len(targets)
            for target in targets:
                if target != record.path:
                    edges[target] = edges.get(target, 0.0) + weight
    return graph


def pagerank(graph: dict[str, dict[str, float]], personal: Iterable[str] = ()) -> dict[str, float]:
    nodes = list(graph)
    if not nodes:
        return {}
    chosen = [p for p in personal if p in graph]
    teleport = {p: 1.0 / len(chosen) for p in chosen} if chosen else {p: 1.0 / len(nodes) for p in nodes}
    totals = {p: sum(edges.values()) for p, edges in graph.items()}
    rank = {p: 1.0 / len(nodes) for p in nodes}
    for _ in range(ITERATIONS):
        dangling = sum(rank[p] for p in nodes if not totals[p])
        following = dict.fromkeys(nodes, 0.0)
        for source, edges in graph.items():
            total = totals[source]
            if total:
                share = rank[source] / total
                for target, weight in edges.items():
                    following[target] += share * weight
        new = {p: DAMPING * (following[p] + dangling * teleport.get(p, 0.0))
               + (1 - DAMPING) * teleport.get(p, 0.0) for p in nodes}
        delta = sum(abs(new[p] - rank[p]) for p in nodes)
        rank = new
        if delta < TOLERANCE:
            break
    return rank


def ranked_paths(records: dict[str, FileRecord], mentioned: Iterable[str] = ()) -> list[str]:
    """Every path, mentioned files first, then by rank (ties by path)."""
    mentioned = [p for p in mentioned if p in records]
    scores = pagerank(reference_graph(records.values()), mentioned)
    first = list(dict.fromkeys(mentioned))
    rest = sorted((p for p in records if p not in set(first)), key=lambda p: (-scores.get(p, 0.0), p))
    return first + rest
