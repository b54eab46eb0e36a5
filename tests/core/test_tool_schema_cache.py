"""Tool argument schemas kept between runs (agent/tools/schemacache.py): the same schemas as
derived, and never a stale one once a class they are made of changes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agent.tools import default_tools, registry, schemacache
from agent.tools.base import ToolArgs


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemacache, "_entries", {})
    monkeypatch.setattr(schemacache, "_pending", set())
    registry._built_schema.cache_clear()
    registry._schema_text.cache_clear()
    yield
    registry._built_schema.cache_clear()
    registry._schema_text.cache_clear()


def _forget() -> None:
    schemacache._entries.clear()
    registry._built_schema.cache_clear()
    registry._schema_text.cache_clear()


def test_kept_schemas_are_the_derived_ones_for_every_built_in_tool(isolated_home: Path) -> None:
    tools = default_tools()
    derived = {tool.name: registry.parameters_schema(tool.Args) for tool in tools}
    schemacache.flush()
    kept = json.loads((isolated_home / "cache" / "coder-tui" / schemacache.FILE_NAME).read_text())
    assert len(kept) == len({tool.Args for tool in tools})
    _forget()
    assert {tool.name: registry.parameters_schema(tool.Args) for tool in tools} == derived


def test_a_changed_source_file_or_a_nested_model_makes_a_new_key(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kept_nested.py").write_text("from pydantic import BaseModel\n\n\n"
                                             "class Item(BaseModel):\n    text: str\n")
    (tmp_path / "kept_args.py").write_text("from agent.tools.base import ToolArgs\nfrom kept_nested import Item\n\n\n"
                                           "class Args(ToolArgs):\n    items: list[Item] | None = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import kept_args

    key = schemacache.key(kept_args.Args)
    assert key is not None and "kept_nested.Item" in key  # a model its fields name counts
    for changed in ("kept_nested.py", "kept_args.py"):
        stat = os.stat(tmp_path / changed)
        os.utime(tmp_path / changed, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        assert schemacache.key(kept_args.Args) != key
        key = schemacache.key(kept_args.Args)
    monkeypatch.delitem(sys.modules, "kept_args")
    monkeypatch.delitem(sys.modules, "kept_nested")


def test_a_stale_or_broken_file_is_derived_again(isolated_home: Path) -> None:
    class Local(ToolArgs):
        path: str

    assert schemacache.key(Local) is None  # made at run time: never kept
    tool = default_tools()[0]
    folder = isolated_home / "cache" / "coder-tui"
    folder.mkdir(parents=True)
    name = f"{tool.Args.__module__}.{tool.Args.__qualname__}"
    (folder / schemacache.FILE_NAME).write_text(json.dumps({name: {"key": "old", "schema": {"bogus": 1}}}))
    assert "bogus" not in registry.parameters_schema(tool.Args)
    _forget()
    (folder / schemacache.FILE_NAME).write_text("{not json")
    assert "bogus" not in registry.parameters_schema(tool.Args)
    assert registry.parameters_schema(tool.Args)["properties"]


def test_a_sessions_tool_offer_writes_the_file_at_once(isolated_home: Path) -> None:
    """Written when the offered tools' schemas are built, not only at exit (a host lives long)."""
    from agent.profiles.toolset import SchemaCache

    offered = SchemaCache()(default_tools())
    assert offered and json.loads((isolated_home / "cache" / "coder-tui" / schemacache.FILE_NAME).read_text())
