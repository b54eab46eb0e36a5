"""Fixtures for the map: a small repository in four languages and a scripted summariser."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.fakellm import FakeLLM, Reply

FILES = {
    "README.md": "# Shapes\nA tiny library that computes areas.\n",
    "src/geometry.py": (
        "from src.util import clamp\n\n\nclass Circle:\n    def __init__(self, r):\n        self.r = clamp(r)\n\n"
        "    def area(self):\n        return 3.14159 * self.r * self.r\n\n\ndef total_area(shapes):\n"
        "    return sum(s.area() for s in shapes)\n"),
    "src/util.py": "def clamp(value, low=0, high=100):\n    return max(low, min(high, value))\n",
    "web/app.ts": (
        "import { formatArea } from './format';\n\nexport interface Shape { area(): number }\n\n"
        "export class Square implements Shape {\n  constructor(private side: number) {}\n"
        "  area(): number { return this.side * this.side; }\n}\n\n"
        "export function describe(s: Shape): string { return formatArea(s.area()); }\n"),
    "web/format.ts": "export function formatArea(a: number): string {\n  return a.toFixed(2);\n}\n",
    "cmd/main.go": (
        "package main\n\nimport \"fmt\"\n\ntype Rect struct{ W, H float64 }\n\n"
        "func (r Rect) Area() float64 { return r.W * r.H }\n\n"
        "func main() { fmt.Println(Scale(Rect{2, 3}).Area()) }\n"),
    "cmd/scale.go": "package main\n\nfunc Scale(r Rect) Rect { return Rect{r.W * 2, r.H * 2} }\n",
    "engine/lib.rs": (
        "pub struct Polygon { pub sides: u32 }\n\npub trait Perimeter { fn perimeter(&self) -> f64; }\n\n"
        "pub fn regular(sides: u32) -> Polygon { Polygon { sides } }\n"),
}

_FILE_RE = re.compile(r"^File: (\S+)", re.MULTILINE)


class Summariser:
    """Answers summary requests with valid JSON naming the file; counts requests per file."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.block_at: int | None = None  # the Nth request (1-based) waits for `release`
        self.blocked = threading.Event()  # set when that request arrived
        self.release = threading.Event()
        self.blocked_path = ""

    def path_of(self, body: dict[str, Any]) -> str:
        for message in body.get("messages", []):
            found = _FILE_RE.search(str(message.get("content") or ""))
            if found:
                return found.group(1)
        return "?"

    def __call__(self, body: dict[str, Any]) -> Reply:
        path = self.path_of(body)
        with self.lock:
            self.counts[path] += 1
            number = sum(self.counts.values())
        held = number == self.block_at
        if held:
            self.blocked_path = path
            self.blocked.set()
        answer = {"description": f"Summary of {path}.", "tags": ["shapes", path.rsplit(".", 1)[-1]],
                  "exports": [], "dependencies": [], "complexity": "low"}
        # Held by the server off its event loop: waiting here, in the responder, stopped the whole
        # server, and a request of the session's own made meanwhile timed out (seen once in a full run).
        return Reply(text=json.dumps(answer), usage=(200, 40), hold=self.release if held else None)


@pytest.fixture
def summariser() -> Any:
    return Summariser()


@pytest.fixture
def summary_llm(summariser: Summariser) -> Any:
    with FakeLLM(responder=summariser) as server:
        yield server


def write_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    for name, text in (files or FILES).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root
