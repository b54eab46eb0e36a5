"""What the prompt input keeps and ranks, without Textual: its history file, the fuzzy scorer and
the index of workspace paths that @ completes."""

from __future__ import annotations

import asyncio
import heapq
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

HISTORY_LIMIT = 1000
MAX_ROWS = 50  # completions offered at once
SCORED = 100  # file paths scored per keystroke, out of however many are known
SCAN_CHUNK = 5000  # paths checked between yields to the event loop, so typing never waits
_WORD_BREAKS = frozenset("/\\_-. ")


def _json_line(text: str) -> str:
    import json  # not at import: nothing on the path to the first frame needs it

    return json.dumps(text, ensure_ascii=False) + "\n"


class PromptHistory:
    """Sent prompts, oldest first; kept in a JSON-lines file when given a path.

    A send appends one line; the file is rewritten (atomically) only once it holds the cap, so it
    never grows past `limit` lines. Unreadable files and bad lines are skipped, never raised. The
    file is read on first use (the first Up or send), not while the app draws its first frame.
    """

    def __init__(self, path: Path | None, limit: int = HISTORY_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self._entries: list[str] | None = None  # not read yet
        self._file_lines = 0
        self._unterminated = False  # the file ends mid-line (a crash while appending)

    @property
    def entries(self) -> list[str]:
        if self._entries is None:
            self._entries = []
            if self.path is not None:
                self._load(self.path)
        return self._entries

    def _load(self, path: Path) -> None:
        import json

        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        lines = content.splitlines()
        self._file_lines, self._unterminated = len(lines), not content.endswith(("\n", "\r")) and bool(content)
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, str) and entry and entry != (self.entries[-1] if self.entries else None):
                self.entries.append(entry)
        del self.entries[: -self.limit]

    def add(self, text: str) -> None:
        if self.entries and self.entries[-1] == text:
            return
        self.entries.append(text)
        del self.entries[: -self.limit]
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._file_lines < self.limit:
                with self.path.open("a", encoding="utf-8") as file:
                    file.write("\n" * self._unterminated + _json_line(text))
                self._file_lines, self._unterminated = self._file_lines + 1, False
            else:  # at the cap: rewrite with the newest entries, atomically
                temporary = self.path.with_name(self.path.name + ".tmp")
                temporary.write_text("".join(map(_json_line, self.entries)), encoding="utf-8")
                os.replace(temporary, self.path)
                self._file_lines = len(self.entries)
        except OSError as error:
            log.warning("could not save prompt history to %s: %s", self.path, error)


def fuzzy_match(query: str, candidate: str) -> tuple[float, list[int]] | None:
    """Score `query` as a case-insensitive subsequence of `candidate`; None if it is not one.

    The best alignment rewards letters at word starts, runs of adjacent letters and letters in the
    last path segment. This is a dynamic programme, O(len(query) x len(candidate)): textual.fuzzy
    enumerates every alignment instead, which took 0.2 s for one path and a query of repeated letters.
    """
    if not query:
        return 0.0, []
    q, c = query.lower(), candidate.lower()
    n, tail = len(c), c.rfind("/") + 1
    bonus = [1.0 + (j == 0 or c[j - 1] in _WORD_BREAKS) + 0.5 * (j >= tail) for j in range(n)]
    worst = float("-inf")
    # best[j]: best score of the query so far with its latest letter at j; links: where the one before sat.
    best = [bonus[j] if c[j] == q[0] else worst for j in range(n)]
    links: list[list[int]] = []
    for letter in q[1:]:
        scores, link = [worst] * n, [-1] * n
        gap_score, gap_at = worst, -1  # best earlier letter at least two columns back
        for j in range(1, n):
            if j >= 2 and best[j - 2] > gap_score:
                gap_score, gap_at = best[j - 2], j - 2
            if c[j] != letter:
                continue
            # Right after the previous letter earns one more than anywhere further on.
            score, at = max((best[j - 1] + 1.0, j - 1), (gap_score, gap_at))
            if score > worst:
                scores[j], link[j] = score + bonus[j], at
        best = scores
        links.append(link)
    end = max(range(n), key=best.__getitem__, default=-1)
    if end < 0 or best[end] == worst:
        return None
    positions = [end]
    for link in reversed(links):
        positions.append(link[positions[-1]])
    return best[end], positions[::-1]


class FileIndex:
    """Workspace paths, shortest first (among equally good matches the shallower file is usually
    meant), ranked against what is typed after `@`."""

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self.paths = sorted(set(paths))
        self.paths.sort(key=len)  # stable: by length, then alphabetically; twice as fast as a tuple key
        self.known = frozenset(self.paths)
        self._lower_paths = [path.lower() for path in self.paths]
        self._lower_names = [path[path.rfind("/") + 1 :] for path in self._lower_paths]

    async def rank(self, query: str) -> list[tuple[str, list[int]]]:
        """The best MAX_ROWS paths for `query`, best first, with the matched positions."""
        if not query:
            return [(path, []) for path in self.paths[:MAX_ROWS]]
        ranked = []
        for i in await self._shortlist(query.lower()):
            match = fuzzy_match(query, self.paths[i])
            if match is not None:
                # Equal scores: the shorter file name is more fully matched; then the shorter path.
                ranked.append((-match[0], len(self._lower_names[i]), i, match[1]))
        ranked.sort(key=lambda item: item[:3])
        return [(self.paths[i], positions) for _, _, i, positions in ranked[:MAX_ROWS]]

    async def _shortlist(self, query: str) -> list[int]:
        """At most SCORED paths worth scoring, found by a cheap scan of all of them.

        Tiers, best first: query inside the file name, scattered through the file name, inside the
        path, scattered through the path. In a name tier the shortest names cover most of the query;
        in a path tier the shortest paths come first, as `paths` is sorted so. The scan yields to
        the event loop between chunks, so typing never waits for 50,000 paths.
        """
        scattered = re.compile("".join(f"[^{re.escape(ch)}]*{re.escape(ch)}" for ch in query)).match
        tiers: tuple[list[int], ...] = ([], [], [], [])
        paths, names = self._lower_paths, self._lower_names
        for start in range(0, len(paths), SCAN_CHUNK):
            for i in range(start, min(start + SCAN_CHUNK, len(paths))):
                if query in names[i]:
                    tiers[0].append(i)
                elif scattered(names[i]):
                    tiers[1].append(i)
                elif len(tiers[2]) < SCORED and query in paths[i]:
                    tiers[2].append(i)
                elif len(tiers[3]) < SCORED and scattered(paths[i]):
                    tiers[3].append(i)
            await asyncio.sleep(0)
        by_name = [heapq.nsmallest(SCORED, tier, key=lambda i: (len(names[i]), i)) for tier in tiers[:2]]
        return [*by_name[0], *by_name[1], *tiers[2], *tiers[3]][:SCORED]
