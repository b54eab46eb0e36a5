"""What a loop step no longer does on the event loop (issue 15, item 17).

An fsync per event line on the loop cost more than the rest of a step; the argument schema was
built on every tool call for an error message it rarely needed. tests/bench/bench_core.py measures
the step; these tests pin the causes, through real session runs against the scripted model.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from agent.session.record import SessionStore, load
from agent.tools.base import Tool, ToolArgs, ToolContext
from agent.tools.files import ReadFileArgs
from agent.tools.registry import ArgumentError, ToolRegistry
from tests.fakellm import Reply, call

STEPS = 6


def fsync_spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Each fsync as (thread id, size of the file synced); the real fsync still runs."""
    seen: list[tuple[int, int]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        seen.append((threading.get_ident(), os.fstat(fd).st_size))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def schema_builds(monkeypatch: pytest.MonkeyPatch, args_model: type[ToolArgs]) -> list[int]:
    built: list[int] = []
    real = args_model.model_json_schema.__func__  # type: ignore[attr-defined]

    def counted(cls: type[ToolArgs], *args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(args_model, "model_json_schema", classmethod(counted))
    return built


async def test_session_lines_are_fsynced_off_the_event_loop(make_harness: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    h = make_harness(files={"a.py": "x = 1\n"})
    h.script(*[Reply(tool_calls=[call("read_file", file_path="a.py")])] * STEPS, Reply(text="done"))
    syncs = fsync_spy(monkeypatch)
    loop_thread = threading.get_ident()
    result = await h.run("read a.py again and again")
    assert result.success and result.iterations == STEPS + 1
    path = h.session.writer.path
    on_loop = [size for thread, size in syncs if thread == loop_thread]
    assert on_loop == [], f"{len(on_loop)} fsyncs blocked the event loop during the turn"
    # the turn's whole record was on disk before run() returned
    assert syncs and max(size for _, size in syncs) == path.stat().st_size
    await h.session.close()
    assert [size for thread, size in syncs if thread == loop_thread] == []
    loaded = load(path)
    assert loaded.damaged_lines == 0 and loaded.messages[-1]["content"] == "done"
    assert oct(path.stat().st_mode & 0o777) == "0o600"


async def test_a_resumed_session_continues_after_background_syncs(make_harness: Any) -> None:
    h = make_harness(files={"a.py": "x = 1\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="first"))
    await h.run("first prompt")
    await h.session.close()
    h2 = make_harness(resume=h.session.session_id)
    h2.script(Reply(text="second"))
    assert (await h2.run("second prompt")).final_response == "second"
    await h2.session.close()
    contents = [m.get("content") for m in load(h.session.writer.path).messages if m["role"] != "tool"]
    assert contents == ["first prompt", None, "first", "second prompt", "second"]


def test_closing_a_writer_waits_for_its_lines(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    syncs = fsync_spy(monkeypatch)
    writer = SessionStore(tmp_path / "sessions").create({"workspace": "/w"})
    for i in range(50):
        writer.message({"role": "user", "content": f"line {i}"})
    writer.close()
    assert max(size for _, size in syncs) == writer.path.stat().st_size
    assert all(thread != threading.get_ident() for thread, _ in syncs)
    assert len(load(writer.path).messages) == 50


async def test_the_argument_schema_is_not_built_per_call(make_harness: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    built = schema_builds(monkeypatch, ReadFileArgs)
    h = make_harness(files={"a.py": "x = 1\n"})
    h.script(*[Reply(tool_calls=[call("read_file", file_path="a.py")])] * STEPS,
             *[Reply(tool_calls=[call("read_file", nope="a.py")])] * 2, Reply(text="done"))
    result = await h.run("read a.py")
    assert result.success
    errors = [e for e in h.of("tool_result") if "read_file expects: file_path (string, required)" in str(e)]
    assert len(errors) == 2  # the bad calls still say what is expected
    assert len(built) <= 1, f"the schema was built {len(built)} times in {STEPS + 2} calls"


class EchoArgs(ToolArgs):
    text: str
    times: int = 1


class Echo(Tool):
    name = "echo"
    description = "Echo text."
    Args = EchoArgs

    async def run(self, args: Any, ctx: ToolContext) -> str:
        return args.text * args.times


def test_parse_builds_the_schema_once_per_tool_and_only_for_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    built = schema_builds(monkeypatch, EchoArgs)
    tool = Echo()
    registry = ToolRegistry([tool])
    for _ in range(20):
        assert registry.parse(tool, '{"text": "hi"}').text == "hi"
    assert built == []
    for raw in ('{"text": 3}', "[1]", "{not json", '{"text": "a", "x": 1}') * 5:
        with pytest.raises(ArgumentError, match=r"echo expects: text \(string, required\), times \(integer\)"):
            registry.parse(tool, raw)
    assert len(built) == 1
    schemas = ToolRegistry([tool]).schemas(workspace=None)  # type: ignore[arg-type]
    schemas[0]["function"]["parameters"]["properties"]["text"]["marked"] = True  # a caller's own change
    again = ToolRegistry([tool]).schemas(workspace=None)  # type: ignore[arg-type]
    assert "marked" not in again[0]["function"]["parameters"]["properties"]["text"] and len(built) == 1
