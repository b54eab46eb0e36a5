"""Building the map of a local folder: symbols in four languages, summaries, refreshes."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from agent.knowledge.builder import MapBuilder
from agent.knowledge.store import MapStore
from agent.llm import LLM
from agent.workspaces.local import LocalWorkspace
from tests.conftest import TEST_KEY
from tests.knowledge.conftest import FILES, write_repo


def llm_for(server: Any) -> LLM:
    return LLM(server.model, server.url, TEST_KEY, timeout=10, max_retries=0)


async def build(root: Path, server: Any, **options: Any) -> Any:
    builder = MapBuilder(LocalWorkspace(root), llm_for(server))
    try:
        return await builder.build(**options), builder.store.files(), builder.store.summaries()
    finally:
        builder.close()


async def test_map_of_four_languages_has_symbols_and_summaries(tmp_path: Path, summary_llm: Any,
                                                              summariser: Any) -> None:
    root = write_repo(tmp_path / "repo")
    report, files, summaries = await build(root, summary_llm)
    assert report.refresh.files == len(FILES) and not report.failed and report.stopped is None
    defs = {path: {(s.name, s.kind) for s in record.defs} for path, record in files.items()}
    assert {("Circle", "class"), ("total_area", "function"), ("area", "function")} <= defs["src/geometry.py"]
    assert {("Shape", "interface"), ("Square", "class"), ("describe", "function")} <= defs["web/app.ts"]
    assert {("Rect", "type"), ("Area", "method"), ("main", "function")} <= defs["cmd/main.go"]
    assert {("Polygon", "struct"), ("Perimeter", "trait"), ("regular", "function")} <= defs["engine/lib.rs"]
    assert "clamp" in files["src/geometry.py"].refs and "formatArea" in files["web/app.ts"].refs
    assert "Scale" in files["cmd/main.go"].refs
    by_path = {data["description"]: sha for sha, data in summaries.items()}
    for path in FILES:
        assert f"Summary of {path}." in by_path, path
        assert by_path[f"Summary of {path}."] == files[path].sha
    one = next(iter(summaries.values()))
    assert set(one) == {"description", "tags", "exports", "dependencies", "complexity", "last_analyzed"}
    assert one["last_analyzed"].endswith("+00:00")
    assert set(summariser.counts.values()) == {1}
    # the most referenced files are summarised before the files that use them
    order = report.summarised
    assert order.index("src/util.py") < order.index("src/geometry.py")
    assert order.index("web/format.ts") < order.index("web/app.ts")


async def test_second_build_after_one_change_makes_exactly_one_summary_request(
        tmp_path: Path, summary_llm: Any, summariser: Any) -> None:
    root = write_repo(tmp_path / "repo")
    await build(root, summary_llm)
    before = len(summary_llm.requests)
    (root / "src/util.py").write_text("def clamp(value):\n    return value\n\n\ndef wrap(v):\n    return v\n")
    report, files, summaries = await build(root, summary_llm)
    assert len(summary_llm.requests) - before == 1
    assert report.refresh.changed == ["src/util.py"] and report.summarised == ["src/util.py"]
    assert {s.name for s in files["src/util.py"].defs} == {"clamp", "wrap"}
    assert len(summaries) == len(FILES)  # the old summary of util.py went with its content
    again = len(summary_llm.requests)
    report, _, _ = await build(root, summary_llm)
    assert len(summary_llm.requests) == again and report.planned == 0


async def test_deleted_file_is_dropped_and_touched_file_is_not_summarised_again(
        tmp_path: Path, summary_llm: Any) -> None:
    root = write_repo(tmp_path / "repo")
    await build(root, summary_llm)
    before = len(summary_llm.requests)
    (root / "engine/lib.rs").unlink()
    os.utime(root / "cmd/scale.go", ns=(1, 1))  # a new modification time, the same content
    report, files, summaries = await build(root, summary_llm)
    assert report.refresh.removed == ["engine/lib.rs"] and report.refresh.changed == []
    assert "engine/lib.rs" not in files and len(summaries) == len(FILES) - 1
    assert len(summary_llm.requests) == before


async def test_store_is_private_and_no_summaries_mode_makes_no_requests(tmp_path: Path, summary_llm: Any) -> None:
    root = write_repo(tmp_path / "repo")
    report, files, summaries = await build(root, summary_llm, summaries=False)
    assert summary_llm.requests == [] and summaries == {} and len(files) == len(FILES)
    builder = MapBuilder(LocalWorkspace(root))
    path = builder.store.path
    builder.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert MapStore(builder.source.key).files().keys() == files.keys()


async def test_invalid_answer_is_asked_again_then_recorded_as_failed(tmp_path: Path, fake_llm: Any) -> None:
    from tests.fakellm import Reply

    root = write_repo(tmp_path / "repo", {"a.py": "def f():\n    return 1\n"})
    fake_llm.script(Reply(text="not json"), Reply(text='{"description": "", "complexity": "huge"}'))
    report, _, summaries = await build(root, fake_llm)
    assert summaries == {} and "a.py" in report.failed
    assert "complexity" in report.failed["a.py"] or "description" in report.failed["a.py"]
    assert "not usable" in fake_llm.requests[1]["messages"][-1]["content"]


def test_ranking_follows_references_and_mentions() -> None:
    from agent.knowledge.rank import ranked_paths
    from agent.knowledge.store import FileRecord
    from agent.knowledge.symbols import Symbol

    def rec(path: str, defs: list[str], refs: list[str]) -> FileRecord:
        return FileRecord(path, path, 1, 0, "python", True, tuple(Symbol(d, "function", 1) for d in defs),
                          frozenset(refs))

    records = {r.path: r for r in [rec("core.py", ["load"], []), rec("a.py", ["a"], ["load"]),
                                   rec("b.py", ["b"], ["load", "a"]), rec("c.py", ["c"], ["load"]),
                                   rec("lonely.py", ["x"], [])]}
    order = ranked_paths(records)
    assert order[0] == "core.py" and order[1] == "a.py" and order[-1] == "lonely.py"
    assert ranked_paths(records, ["lonely.py"])[0] == "lonely.py"
