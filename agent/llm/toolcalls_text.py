"""Tool calls a model wrote in its text: a model served without a tool-call parser.

Hermes and Qwen models write `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; others a
lone fenced ```json block holding `{"name": ..., "arguments": ...}`. When a reply has no
structured calls, `extract` turns these into ordinary calls (run through the same approvals), but
only for a tool the model was offered, and a fenced block only when it is the reply's one JSON
block. `TextCallFilter` keeps the raw tags out of the text shown while it streams: a tag, or a
JSON block naming a known tool, is held back; what turns out not to be a call is shown after all.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

from agent.llm.types import ToolCallRequest

TAG_RE = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
FENCE_RE = re.compile(r"```json[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)
OPENERS = ("<tool_call>", "```json")
CLOSERS = {"<tool_call>": "</tool_call>", "```json": "```"}


def _call(body: str, known: set[str]) -> tuple[str, str] | None:
    """(name, arguments JSON) when `body` is a call of a known tool."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("name") not in known:
        return None
    arguments: Any = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # some templates send the arguments as a JSON string
        return value["name"], arguments
    return value["name"], json.dumps(arguments if arguments is not None else {})


def extract(text: str, known: set[str]) -> tuple[list[ToolCallRequest], str]:
    """The calls written in `text` and the text without them (no calls: [] and `text` as it was)."""
    found: list[tuple[str, str]] = []
    kept = text
    tags = list(TAG_RE.finditer(text))
    if tags:
        parsed = [_call(m.group(1), known) for m in tags]
        if all(parsed):
            found = [c for c in parsed if c]
            kept = TAG_RE.sub("", text)
    else:
        fences = list(FENCE_RE.finditer(text))
        if len(fences) == 1 and (one := _call(fences[0].group(1), known)):
            found, kept = [one], FENCE_RE.sub("", text)
    calls = [ToolCallRequest(id=f"call_{uuid.uuid4().hex[:12]}_{i}", name=name, arguments=args)
             for i, (name, args) in enumerate(found)]
    return calls, kept.strip() if calls else text


class TextCallFilter:
    """Streams text on to `out`, holding back tool-call tags and JSON blocks that name a known tool."""

    def __init__(self, out: Callable[[str], None], known: set[str]) -> None:
        self.out = out
        self.known = known
        self.buffer = ""
        self.withheld: list[str] = []  # held-back pieces; shown by `release` if they were not calls

    def feed(self, text: str) -> None:
        if not self.known:  # no tools offered: nothing to hold back
            self._show(text)
            return
        self.buffer += text
        while self.buffer:
            start, opener = _first_opener(self.buffer)
            if opener is None:
                keep = _partial_opener(self.buffer)
                ready, self.buffer = self.buffer[: len(self.buffer) - keep], self.buffer[len(self.buffer) - keep:]
                self._show(ready)
                return
            self._show(self.buffer[:start])
            self.buffer = self.buffer[start:]
            end = self.buffer.find(CLOSERS[opener], len(opener))
            if end < 0:
                return  # wait for the rest of the block
            block, self.buffer = self.buffer[: end + len(CLOSERS[opener])], self.buffer[end + len(CLOSERS[opener]):]
            body = block[len(opener): -len(CLOSERS[opener])]
            if opener == "<tool_call>" or _call(body.strip(), self.known):
                self.withheld.append(block)
            else:
                self._show(block)

    def flush(self) -> None:
        if self.buffer.startswith(OPENERS[0]):  # a tag left open (cut off): held like a whole one
            self.withheld.append(self.buffer)
        else:
            self._show(self.buffer)
        self.buffer = ""

    def release(self) -> None:
        """Show what was held back (the reply's calls were not taken from its text)."""
        for block in self.withheld:
            self._show(block)
        self.withheld.clear()

    def _show(self, text: str) -> None:
        if text:
            self.out(text)


def _first_opener(text: str) -> tuple[int, str | None]:
    spots = [(text.find(o), o) for o in OPENERS if o in text]
    return min(spots) if spots else (-1, None)


def _partial_opener(text: str) -> int:
    for size in range(min(len(text), max(map(len, OPENERS))), 0, -1):
        if any(o.startswith(text[-size:]) for o in OPENERS):
            return size
    return 0
