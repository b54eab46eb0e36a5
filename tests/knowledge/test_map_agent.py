"""The agent's use of the map: the system prompt's ranked section and get_codebase_map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.knowledge.builder import MapBuilder
from agent.workspaces.local import LocalWorkspace
from tests.fakellm import Reply, call
from tests.knowledge.conftest import FILES
from tests.knowledge.test_map_build import llm_for


def system_of(request: dict[str, Any]) -> str:
    return request["messages"][0]["content"]


def listed(section: str) -> list[str]:
    body = section.split("## Codebase map", 1)[1].split("\n")[2:]
    return [line.split(" — ")[0] for line in body if line and not line.startswith((" ", "["))]


async def test_prompt_map_ranks_mentioned_files_first_and_fits_its_budget(make_harness: Any, fake_llm: Any) -> None:
    h = make_harness(files=FILES)
    h.script(Reply(text="ok"), Reply(text="ok"))
    await h.run("what does cmd/scale.go do?")
    first = system_of(fake_llm.requests[0])
    assert listed(first)[0] == "cmd/scale.go"
    assert sorted(listed(first)) == sorted(FILES)
    assert "defines: Scale" in first
    # without mentions, files the rest of the code refers to rank first
    h.session.messages[1:] = []
    h.session.config.map_tokens = 60
    await h.run("hello")
    small = system_of(fake_llm.requests[1])
    section = small.split("## Codebase map", 1)[1]
    assert len(section) <= 60 * 4 + 40 and "more file(s) not shown" in section
    assert listed(small)[0] in {"src/util.py", "web/format.ts", "cmd/scale.go", "cmd/main.go"}


async def test_map_tokens_zero_leaves_the_section_out(make_harness: Any, fake_llm: Any) -> None:
    h = make_harness(files=FILES)
    h.session.config.map_tokens = 0
    h.script(Reply(text="ok"))
    await h.run("hi")
    assert "Codebase map" not in system_of(fake_llm.requests[0])


async def test_get_codebase_map_outline_file_and_query(make_harness: Any, fake_llm: Any, summary_llm: Any,
                                                       tmp_path: Path) -> None:
    h = make_harness(files=FILES)
    builder = MapBuilder(LocalWorkspace(h.root), llm_for(summary_llm))
    await builder.build()
    builder.close()
    h.script(Reply(tool_calls=[call("get_codebase_map", path="web"),
                               call("get_codebase_map", path="src/geometry.py"),
                               call("get_codebase_map", query="summary format")]), Reply(text="done"))
    await h.run("map please")
    outline, detail, found = [m["content"] for m in h.session.messages if m["role"] == "tool"]
    assert outline.startswith(f"Map: {len(FILES)} file(s), {len(FILES)} with an AI summary.")
    assert "web/app.ts — Summary of web/app.ts. [shapes, ts]" in outline and "src/" not in outline
    assert "Circle (class, line 4)" in detail and "complexity: low" in detail
    assert found.splitlines()[1].startswith("web/format.ts")


async def test_get_codebase_map_without_summaries_still_has_symbols(make_harness: Any) -> None:
    h = make_harness(files=FILES)
    h.script(Reply(tool_calls=[call("get_codebase_map", path="engine/lib.rs")]), Reply(text="done"))
    await h.run("map")
    out = h.last_tool_message()
    assert "0 with an AI summary (the user can add summaries with `coder-tui map`)" in out
    assert "Polygon (struct, line 1)" in out


async def test_a_very_large_folder_gets_no_first_map_from_a_prompt(make_harness: Any, fake_llm: Any,
                                                                   monkeypatch: Any) -> None:
    import agent.knowledge.prompt

    monkeypatch.setattr(agent.knowledge.prompt, "FIRST_MAP_MAX_FILES", 3)
    h = make_harness(files=FILES)
    h.script(Reply(text="ok"), Reply(text="ok"))
    await h.run("hi")
    assert "Codebase map" not in system_of(fake_llm.requests[0])
    builder = MapBuilder(LocalWorkspace(h.root))
    await builder.refresh()  # what `coder-tui map` does: from then on prompts keep it current
    builder.close()
    await h.run("again")
    assert "Codebase map" in system_of(fake_llm.requests[1])
