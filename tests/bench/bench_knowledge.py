"""Codebase map benchmarks: a tree-sitter map of a generated 2,000-file repository, cold and warm,
and the system prompt's map section per prompt.

Run: python tests/bench/bench_knowledge.py   (or python -m tests.bench for every benchmark)
Goals: cold map under 5 s, warm refresh under 0.5 s; the map section well under 100 ms per prompt.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

FILES = 2000
TEMPLATES = {
    ".py": ("from pkg import {ref}\n\n\nclass Model{n}:\n    def run(self, value):\n        return {ref}(value)\n\n"
            "{body}\ndef helper_{n}(items):\n    return [Model{n}().run(i) for i in items]\n"),
    ".ts": ("import {{ {ref} }} from './x';\n\nexport interface Shape{n} {{ area(): number }}\n\n"
            "export class Widget{n} {{\n  render(): string {{ return {ref}(); }}\n}}\n{body}\n"
            "export function helper_{n}(): number {{ return new Widget{n}().render().length; }}\n"),
    ".go": ("package main\n\ntype Store{n} struct{{ items []int }}\n\nfunc (s Store{n}) Len() int {{ return {ref}(s.items) }}\n"
            "{body}\nfunc helper_{n}() int {{ return Store{n}{{}}.Len() }}\n"),
    ".rs": ("pub struct Engine{n} {{ pub size: u32 }}\n\npub fn helper_{n}(e: &Engine{n}) -> u32 {{ {ref}(e.size) }}\n"
            "{body}\n"),
}
BODIES = {".py": "# filler\n" * 30, ".ts": "// filler\n" * 30, ".go": "// filler\n" * 30, ".rs": "// filler\n" * 30}


def generate(root: Path) -> None:
    suffixes = list(TEMPLATES)
    for n in range(FILES):
        suffix = suffixes[n % len(suffixes)]
        folder = root / f"pkg{n % 40}" / f"mod{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        ref = f"helper_{(n * 7 + 3) % FILES}"
        (folder / f"file{n}{suffix}").write_text(TEMPLATES[suffix].format(n=n, ref=ref, body=BODIES[suffix]))


async def main() -> None:
    from agent.knowledge.builder import MapBuilder
    from agent.knowledge.prompt import map_section
    from agent.workspaces.local import LocalWorkspace

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_DATA_HOME"] = str(Path(tmp) / "data")
        root = Path(tmp) / "repo"
        generate(root)
        workspace = LocalWorkspace(root)
        started = time.perf_counter()
        builder = MapBuilder(workspace)
        report = await builder.refresh()
        cold = time.perf_counter() - started
        started = time.perf_counter()
        await builder.refresh()
        warm = time.perf_counter() - started
        builder.close()
        print(f"tree-sitter map of {report.files} files: cold {cold:.2f} s (goal < 5 s), "
              f"warm {warm * 1000:.0f} ms (goal < 500 ms); {report.parsed} parsed")
        messages = [{"role": "user", "content": "look at pkg3/mod3/file3.py and file10.py"}]
        timings = []
        for _ in range(20):
            started = time.perf_counter()
            section = await map_section(workspace, messages, 1024)
            timings.append(time.perf_counter() - started)
        (root / "pkg0/mod0/file0.py").write_text("def changed():\n    return 1\n")
        started = time.perf_counter()
        await map_section(workspace, messages, 1024)
        changed = time.perf_counter() - started
        print(f"map section per prompt: median {statistics.median(timings) * 1000:.0f} ms, first "
              f"{timings[0] * 1000:.0f} ms, after a file changed {changed * 1000:.0f} ms "
              f"({len(section)} characters)")


if __name__ == "__main__":
    asyncio.run(main())
