"""read_file refreshes a stale map summary in the background (seed 001), through the real loop.

One scripted model server answers both: summary requests (recognised by the summariser's system
prompt) get the summary JSON, every other request the test's scripted replies.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent.knowledge.builder import MapBuilder
from agent.knowledge.store import git_blob_sha
from agent.knowledge.summarize import SYSTEM
from agent.workspaces.local import LocalWorkspace
from tests.fakellm import FakeLLM, Reply, call
from tests.knowledge.conftest import FILES, Summariser
from tests.knowledge.test_map_build import llm_for

CHANGED = "def clamp(value, low=0, high=10):\n    return max(low, min(high, value))\n"


class Both:
    def __init__(self) -> None:
        self.summariser = Summariser()
        self.replies: list[Reply] = []
        self.broken = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body["messages"][0].get("content") == SYSTEM:
            return Reply(text="not a summary") if self.broken else self.summariser(body)
        return self.replies.pop(0)


@pytest.fixture
def both() -> Both:
    return Both()


@pytest.fixture
def fake_llm(both: Both) -> Any:  # make_harness's model: the same server answers summaries
    with FakeLLM(responder=both) as server:
        yield server


async def mapped(make_harness: Any, fake_llm: Any) -> Any:
    """A session on FILES whose map has every summary; then util.py changes on disk."""
    h = make_harness(files=FILES)
    builder = MapBuilder(LocalWorkspace(h.root), llm_for(fake_llm))
    try:
        await builder.build()
    finally:
        builder.close()
    (h.root / "src/util.py").write_text(CHANGED)
    (h.root / "src/new.py").write_text("x = 1\n")  # never mapped
    return h


def summaries_of(h: Any) -> dict[str, Any]:
    builder = MapBuilder(LocalWorkspace(h.root))
    try:
        return builder.store.summaries()
    finally:
        builder.close()


async def test_reading_a_changed_file_resummarises_it_without_waiting(make_harness: Any, fake_llm: Any,
                                                                       both: Both) -> None:
    h = await mapped(make_harness, fake_llm)
    assert both.summariser.counts["src/util.py"] == 1
    both.summariser.block_at = sum(both.summariser.counts.values()) + 1  # the refresh is held
    both.replies += [Reply(tool_calls=[call("read_file", file_path="src/util.py"),
                                       call("read_file", file_path="src/geometry.py"),
                                       call("read_file", file_path="src/new.py")]), Reply(text="Read.")]
    complete = await h.run("look at the utilities")
    assert complete.success
    freshen = h.session.ctx.extras["map_freshen"]
    # the summary request came after the run had ended (it never waited for it)
    assert await asyncio.to_thread(both.summariser.blocked.wait, 60), h.of("warning")
    assert not freshen.task.done()
    both.summariser.release.set()
    await freshen.idle()
    assert freshen.refreshed == ["src/util.py"]
    assert both.summariser.counts["src/util.py"] == 2
    assert both.summariser.counts["src/geometry.py"] == 1  # unchanged: not summarised again
    assert "src/new.py" not in both.summariser.counts  # never mapped: never summarised
    assert git_blob_sha(CHANGED.encode()) in summaries_of(h)
    assert not h.of("warning")


async def test_a_failing_refresh_is_one_warning(make_harness: Any, fake_llm: Any, both: Both) -> None:
    h = await mapped(make_harness, fake_llm)
    (h.root / "src/geometry.py").write_text("class Circle:\n    pass\n")
    both.broken = True
    both.replies += [Reply(tool_calls=[call("read_file", file_path="src/util.py"),
                                       call("read_file", file_path="src/geometry.py")]), Reply(text="Read.")]
    await h.run("look")
    await h.session.ctx.extras["map_freshen"].idle()
    warnings = [w.message for w in h.of("warning") if w.message.startswith("map:")]
    assert len(warnings) == 1 and "src/util.py" in warnings[0] and "coder-tui map" in warnings[0]


async def test_off_when_the_map_is_off(make_harness: Any, fake_llm: Any, both: Both) -> None:
    h = await mapped(make_harness, fake_llm)
    h.session.config.map_tokens = 0
    both.replies += [Reply(tool_calls=[call("read_file", file_path="src/util.py")]), Reply(text="Read.")]
    before = sum(both.summariser.counts.values())
    await h.run("look")
    await h.session.ctx.extras["map_freshen"].idle()
    assert sum(both.summariser.counts.values()) == before


async def test_no_map_no_summary(make_harness: Any, fake_llm: Any, both: Both, tmp_path: Path) -> None:
    h = make_harness(files=FILES)
    both.replies += [Reply(tool_calls=[call("read_file", file_path="src/util.py")]), Reply(text="Read.")]
    await h.run("look")
    await h.session.ctx.extras["map_freshen"].idle()
    assert not both.summariser.counts
    assert summaries_of(h) == {}
