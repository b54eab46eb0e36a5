"""Every registered tool through every mode: plan never changes anything, ask changes nothing
before approval (and nothing on deny), allow runs without asking.

The language-server tools run against a real server (basedpyright, a test dependency) on a small
Python project: only their cases turn servers on (tests/conftest.py turns them off elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from aiohttp import web

from agent.approval import Decision
from agent.tools import default_tools
from tests.fakellm import Reply, ToolCallSpec, call
from tests.threaded import ThreadedApp

FILES = {"f.txt": "one\ntwo\nthree\n", "g.txt": "gee\n"}
# The project the language-server cases ask about (written by their `before`).
MODULE = "def add(a: int, b: int) -> int:\n    return a + b\n"
USER = "from util import add\n\ntotal: int = add(1, 2)\n"
BROKEN = 'count: int = "three"\n'
PYTHON = {"util.py": MODULE, "app.py": USER, "broken.py": BROKEN}


@dataclass
class Case:
    args: dict[str, Any]
    effect: Callable[[Any], bool] | None = None  # True once the tool has had its effect
    setup: list[ToolCallSpec] = field(default_factory=list)  # calls that must run first (allow)
    before: Callable[[Any], None] | None = None  # prepares the harness's workspace (every mode)
    # True when the tool has done its job, given the harness and the tool's output (checked where it runs)
    answer: Callable[[Any, str], bool] | None = None
    lsp: bool = False  # the case needs a language server: servers are on for its session


@pytest.fixture
def web_server() -> Any:
    hits: list[str] = []

    async def page(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="<html><body><h1>Title</h1><p>Body text</p></body></html>",
                            content_type="text/html")

    def build() -> web.Application:
        app = web.Application()
        app.router.add_get("/page", page)
        return app

    server = ThreadedApp(build).start()
    server.hits = hits  # type: ignore[attr-defined]
    yield server
    server.stop()


def cases(server: Any) -> dict[str, Case]:
    changed = lambda h: h.read("f.txt") != FILES["f.txt"]  # noqa: E731
    return {
        "read_file": Case({"file_path": "f.txt"}),
        "get_line_range": Case({"file_path": "f.txt", "start_line": 1, "end_line": 2}),
        "list_dir": Case({"path": ""}),
        "search_code": Case({"pattern": "two"}),
        "get_project_info": Case({}),
        "todo_read": Case({}),
        "todo_write": Case({"todos": [{"id": "1", "content": "x"}]}),
        "scratchpad_write": Case({"text": "plan"}),  # the agent's own notes: a read, never asked
        "note_observation": Case({"note": "f.txt has three lines"}),
        "write_file": Case({"file_path": "new.txt", "content": "x\n"}, lambda h: (h.root / "new.txt").exists()),
        "patch_file": Case({"file_path": "f.txt", "patches": [{"old_text": "two", "new_text": "2"}]}, changed),
        "multi_edit": Case({"edits": [{"file_path": "g.txt", "patches": [{"old_text": "gee", "new_text": "G"}]}]},
                           lambda h: h.read("g.txt") != "gee\n"),
        "replace_lines": Case({"file_path": "f.txt", "start_line": 1, "end_line": 1, "new_content": "1"}, changed),
        "insert_at_line": Case({"file_path": "f.txt", "line": 1, "content": "0"}, changed),
        "delete_lines": Case({"file_path": "f.txt", "start_line": 1, "end_line": 1}, changed),
        "bash_exec": Case({"command": "touch ran.txt"}, lambda h: (h.root / "ran.txt").exists()),
        "shell_open": Case({}, lambda h: bool(h.session.ctx.extras.get("shells") and
                                               h.session.ctx.extras["shells"].sessions)),
        "shell_exec": Case({"session_id": "sh1", "command": "touch ran2.txt"},
                           lambda h: (h.root / "ran2.txt").exists(), [call("shell_open")]),
        "shell_close": Case({"session_id": "sh1"}, None, [call("shell_open")]),
        "shell_send": Case({"session_id": "sh1", "keys": "touch ran3.txt<enter>"},
                           lambda h: (h.root / "ran3.txt").exists(), [call("shell_open", pty=True)]),
        "web_fetch": Case({"url": f"{server.base_url}/page"}, lambda h: bool(server.hits)),
        "get_codebase_map": Case({"path": ""}),
        "list_tasks": Case({}),
        "schedule_task": Case({"description": "x", "delay_seconds": 60}, lambda h: bool(_tasks(h))),
        "cancel_task": Case({"id": "t1"}, lambda h: _tasks(h)[0].status == "cancelled", before=_one_task),
        **lsp_cases(),
    }


def lsp_cases() -> dict[str, Case]:
    """A real server answers the read tools about PYTHON; lsp_rename changes util.py and app.py."""
    def says(*parts: str) -> Callable[[Any, str], bool]:
        return lambda h, out: all(part in out for part in parts)

    def python(args: dict[str, Any], answer: Callable[[Any, str], bool],
               effect: Callable[[Any], bool] | None = None) -> Case:
        return Case(args, effect, before=_python_project, answer=answer, lsp=True)

    add = {"file_path": "app.py", "line": 3, "symbol": "add"}
    renamed = {name: text.replace("add", "plus") for name, text in PYTHON.items()}
    return {
        "lsp_diagnostics": python({"file_path": "broken.py"}, says("broken.py:1:14 error: Type \"Literal['three']\"")),
        "lsp_definition": python(add, says("add is defined at:\nutil.py:1:5  def add(a: int, b: int) -> int:")),
        "lsp_references": python(add, says("3 reference(s) to add:", "util.py:1:5", "app.py:1:18", "app.py:3:14")),
        "lsp_hover": python(add, says("(function) def add(", ") -> int")),
        "lsp_symbols": python({"file_path": "util.py"}, says("function add  (line 1)")),
        # effect: either file changed at all (plan and a deny leave both as they were); answer: the
        # server's rename, in both files
        "lsp_rename": python({"file_path": "util.py", "line": 1, "symbol": "add", "new_name": "plus"},
                             lambda h, out: all(h.read(n) == renamed[n] for n in ("util.py", "app.py")),
                             lambda h: h.read("util.py") != MODULE or h.read("app.py") != USER),
    }


def _python_project(h: Any) -> None:
    for name, text in PYTHON.items():
        (h.root / name).write_text(text)


def _tasks(h: Any) -> list[Any]:
    from agent.session.tasks import task_store

    store = task_store(h.session.workspace)
    try:
        return store.list()
    finally:
        store.close()


def _one_task(h: Any) -> None:
    """A pending task with the id the case cancels."""
    from agent.session.tasks import task_store
    from agent.knowledge.tasks import Task

    store = task_store(h.session.workspace)
    store._write(Task("t1", "later", "pending", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00",
                      due=4102444800.0))
    store.close()


def test_the_table_covers_every_registered_tool(web_server: Any) -> None:
    assert sorted(cases(web_server)) == sorted(tool.name for tool in default_tools())


def _servers(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Language servers on for the session of a case that needs one (tests/conftest.py turns them off)."""
    if case.lsp:
        monkeypatch.delenv("CODER_TUI_LSP", raising=False)


async def _run_one(make_harness: Any, mode: str, name: str, case: Case, decisions: list[Decision],
                   monkeypatch: pytest.MonkeyPatch) -> Any:
    _servers(case, monkeypatch)
    h = make_harness(mode=mode, files=FILES, decisions=decisions)
    if case.before:
        case.before(h)
    setup = case.setup if mode == "allow" else []
    h.script(Reply(tool_calls=[*setup, call(name, **case.args)]), Reply(text="done"))
    await h.run(f"call {name}")
    return h


@pytest.mark.parametrize("name", [t.name for t in default_tools()])
async def test_plan_mode_blocks_every_change(make_harness: Any, web_server: Any, monkeypatch: pytest.MonkeyPatch,
                                             name: str) -> None:
    tool = next(t for t in default_tools() if t.name == name)
    case = cases(web_server)[name]
    h = await _run_one(make_harness, "plan", name, case, [], monkeypatch)
    assert not h.of("approval_required")
    result = h.of("tool_result")[-1]
    if tool.kind == "read":
        assert "blocked" not in (result.error or "")
        assert case.answer is None or (result.ok and case.answer(h, result.output)), result
    else:
        assert not result.ok and "blocked in plan mode" in result.error
    assert case.effect is None or not case.effect(h)
    assert h.read("f.txt") == FILES["f.txt"] and not h.of("file_changed")


@pytest.mark.parametrize("name", [t.name for t in default_tools() if t.kind != "read"])
async def test_ask_mode_changes_nothing_on_deny(make_harness: Any, web_server: Any, monkeypatch: pytest.MonkeyPatch,
                                               name: str) -> None:
    case = cases(web_server)[name]
    h = await _run_one(make_harness, "ask", name, case, [Decision("deny", feedback="not now")], monkeypatch)
    assert len(h.of("approval_required")) == 1
    assert h.of("approval_resolved")[0].decision == "deny"
    result = h.of("tool_result")[-1]
    assert not result.ok and "not now" in result.error
    assert case.effect is not None and not case.effect(h)


@pytest.mark.parametrize("name", [t.name for t in default_tools() if t.kind != "read"])
async def test_ask_mode_acts_only_after_approval(make_harness: Any, web_server: Any, monkeypatch: pytest.MonkeyPatch,
                                                name: str) -> None:
    case = cases(web_server)[name]
    seen_before: list[bool] = []

    class Watching:
        async def decide(self, request: Any) -> Decision:
            seen_before.append(case.effect(h))  # type: ignore[misc]
            return Decision("allow_once")

    _servers(case, monkeypatch)
    h = make_harness(mode="ask", files=FILES, approver=Watching())
    if case.before:
        case.before(h)
    h.script(Reply(tool_calls=[*case.setup, call(name, **case.args)]), Reply(text="done"))
    await h.run(f"call {name}")
    assert seen_before and not any(seen_before[-1:])
    assert case.effect is not None and case.effect(h)
    assert case.answer is None or case.answer(h, h.of("tool_result")[-1].output)


def _allow_loopback(h: Any) -> None:
    h.session.ctx.extras["permissions"].rules.add("allow", "web_fetch(domain:127.0.0.1)", "test")


@pytest.mark.parametrize("name", [t.name for t in default_tools()])
async def test_allow_mode_runs_without_asking(make_harness: Any, web_server: Any, monkeypatch: pytest.MonkeyPatch,
                                              name: str) -> None:
    case = cases(web_server)[name]
    if name == "web_fetch":  # the test server is on loopback: asked in every mode unless a rule names its host
        before = case.before
        case = replace(case, before=lambda h: (before and before(h), _allow_loopback(h)))
    h = await _run_one(make_harness, "allow", name, case, [], monkeypatch)
    assert not h.of("approval_required")
    assert h.of("tool_result")[-1].ok, h.of("tool_result")[-1]
    assert case.effect is None or case.effect(h)
    assert case.answer is None or case.answer(h, h.of("tool_result")[-1].output), h.of("tool_result")[-1]


async def test_allow_all_lasts_for_that_tool_only(make_harness: Any) -> None:
    h = make_harness(mode="ask", files=FILES, decisions=[Decision("allow_all"), Decision("deny")])
    h.script(Reply(tool_calls=[call("insert_at_line", file_path="f.txt", line=1, content="a"),
                               call("insert_at_line", file_path="f.txt", line=1, content="b"),
                               call("write_file", file_path="w.txt", content="w")]),
             Reply(text="done"))
    await h.run()
    assert [e.tool for e in h.of("approval_required")] == ["insert_at_line", "write_file"]
    assert h.read("f.txt").startswith("b\na\n") and not (h.root / "w.txt").exists()
