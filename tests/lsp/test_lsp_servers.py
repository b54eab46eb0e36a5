"""Language servers through the real loop: real servers from the test dependencies (basedpyright
from PyPI, typescript-language-server with TypeScript from tests/interop's npm packages), the
scripted model server, real folders and git checkpoints."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent.approval import Decision
from agent.config import LspServerSettings
from tests.conftest import ROOT
from tests.fakellm import Reply, call

TS_BIN = ROOT / "tests" / "interop" / "node_modules" / ".bin"
MODULE = "def add(a: int, b: int) -> int:\n    return a + b\n"
USER = "from util import add\n\ntotal: int = add(1, 2)\n\n\ndef twice() -> int:\n    return add(total, total)\n"


def _errors(event: Any) -> list[Any]:
    return [d for d in event.diagnostics or [] if d.severity == "error"]


async def test_an_edit_that_breaks_types_reports_the_error_in_its_result_and_its_diff(make_harness: Any) -> None:
    h = make_harness(files={"util.py": MODULE, "app.py": USER})
    h.script(Reply(tool_calls=[call("patch_file", file_path="app.py",
                                    patches=[{"old_text": "total: int = add(1, 2)", "new_text": "total: str = add(1, 2)"}])]),
             Reply(tool_calls=[call("patch_file", file_path="app.py",
                                    patches=[{"old_text": "total: str", "new_text": "total: int"}])]),
             Reply(text="done"))
    await h.run("break it, then mend it")
    broken, mended = [m["content"] for m in h.session.messages if m["role"] == "tool"]
    assert "Language server: 3 errors, 0 warnings in app.py after this edit:" in broken
    assert 'app.py:3:14 error: Type "int" is not assignable to declared type "str"' in broken
    assert 'app.py:7:16 error: Argument of type "str" cannot be assigned to parameter "a"' in broken
    assert "no errors or warnings in app.py after this edit" in mended
    first, second = h.of("file_changed")
    assert [d.line for d in _errors(first)] == [3, 7, 7] and first.diagnostics[0].source == "basedpyright"
    assert second.diagnostics == []


@pytest.fixture
def typescript_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (TS_BIN / "typescript-language-server").exists():
        pytest.fail("tests/interop/node_modules is missing typescript-language-server: run `npm ci --prefix tests/interop`")
    monkeypatch.setenv("PATH", f"{TS_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


async def test_typescript_edits_get_the_compilers_errors(make_harness: Any, typescript_on_path: None) -> None:
    files = {"tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
             "lib.ts": "export function twice(n: number): number {\n  return n * 2;\n}\n"}
    h = make_harness(files=files)
    h.script(Reply(tool_calls=[call("write_file", file_path="main.ts",
                                    content='import { twice } from "./lib";\n\nconst s: string = twice(2);\nconsole.log(s);\n')]),
             Reply(tool_calls=[call("lsp_definition", file_path="main.ts", line=3, symbol="twice")]),
             Reply(text="done"))
    await h.run("use twice")
    created, definition = [m["content"] for m in h.session.messages if m["role"] == "tool"]
    assert "main.ts:3:7 error: Type 'number' is not assignable to type 'string'." in created
    assert "twice is defined at:\nlib.ts:1:17  export function twice(n: number): number {" in definition


async def test_definition_and_references_across_two_files(make_harness: Any) -> None:
    h = make_harness(files={"util.py": MODULE, "app.py": USER})
    h.script(Reply(tool_calls=[call("lsp_definition", file_path="app.py", line=7, symbol="add"),
                               call("lsp_references", file_path="util.py", line=1, symbol="add"),
                               call("lsp_symbols", file_path="app.py"),
                               call("lsp_hover", file_path="app.py", line=7, symbol="add")]),
             Reply(text="done"))
    await h.run("where is add used?")
    definition, references, symbols, hover = [m["content"] for m in h.session.messages if m["role"] == "tool"]
    assert definition == "add is defined at:\nutil.py:1:5  def add(a: int, b: int) -> int:"
    assert references.splitlines()[0] == "4 reference(s) to add:"
    assert set(references.splitlines()[1:]) == {
        "util.py:1:5  def add(a: int, b: int) -> int:", "app.py:1:18  from util import add",
        "app.py:3:14  total: int = add(1, 2)", "app.py:7:12  return add(total, total)"}
    assert "variable total  (line 3)" in symbols and "function twice  (line 6)" in symbols
    assert hover.startswith("(function) def add(") and "b: int" in hover and ") -> int" in hover


async def test_a_rename_across_files_is_approved_like_an_edit_and_undo_restores_it(make_harness: Any) -> None:
    import subprocess

    h = make_harness(mode="ask", files={"util.py": MODULE, "app.py": USER}, decisions=[Decision("allow_once")])
    subprocess.run(["git", "init", "-q"], cwd=h.root, check=True)
    h.script(Reply(tool_calls=[call("lsp_rename", file_path="util.py", line=1, symbol="add", new_name="plus",
                                    reason="a clearer name")]),
             Reply(text="renamed"))
    await h.run("rename add to plus")
    asked = h.approver.requests
    assert len(asked) == 1 and asked[0].tool == "lsp_rename"
    assert sorted(c.path for c in asked[0].changes) == ["app.py", "util.py"]
    assert h.read("util.py").startswith("def plus(a: int, b: int)")
    assert h.read("app.py") == USER.replace("add", "plus")
    assert "no errors or warnings in app.py" in h.last_tool_message()
    assert len(h.of("checkpoint")) == 1
    await h.session.undo()
    assert h.read("util.py") == MODULE and h.read("app.py") == USER


async def test_a_denied_rename_changes_nothing(make_harness: Any) -> None:
    h = make_harness(mode="ask", files={"util.py": MODULE, "app.py": USER}, decisions=[Decision("deny")])
    h.script(Reply(tool_calls=[call("lsp_rename", file_path="util.py", line=1, symbol="add", new_name="plus")]),
             Reply(text="ok"))
    await h.run()
    assert h.read("util.py") == MODULE and h.read("app.py") == USER
    assert "denied" in h.last_tool_message()


def _configure(h: Any, **python: Any) -> None:
    """[lsp.python] for this session, as a user's config would give it."""
    from agent.lsp import for_session

    h.session.config.lsp = {"python": LspServerSettings(**python)}
    h.session.lsp = for_session(h.session.config, h.session.workspace, h.session.emit)
    h.session.executor.diagnose = h.session.lsp.diagnose


async def test_a_server_that_never_answers_does_not_stall_the_turn(make_harness: Any) -> None:
    h = make_harness(files={"a.py": "x = 1\n"})
    mute = [sys.executable, "-c", "import sys\nfor _ in sys.stdin.buffer: pass"]
    _configure(h, command=mute, timeout=1.5)
    h.script(Reply(tool_calls=[call("write_file", file_path="a.py", content="x = 2\n")]),
             Reply(tool_calls=[call("write_file", file_path="a.py", content="x = 3\n")]),
             Reply(text="done"))
    started = time.monotonic()
    complete = await h.run()
    assert complete.success and h.read("a.py") == "x = 3\n"
    assert time.monotonic() - started < 6  # one timeout, not one per edit
    warnings = [w.message for w in h.of("warning") if "language server" in w.message]
    assert len(warnings) == 1 and "did not answer to start within 1.5 s" in warnings[0]
    assert all(e.diagnostics is None for e in h.of("file_changed"))
    assert "lsp_definition" not in [t.name for t in h.session.offered_tools()]


async def test_a_server_that_exits_mid_session_is_set_aside_and_said_once(make_harness: Any) -> None:
    h = make_harness(files={"util.py": MODULE, "app.py": USER})
    h.script(Reply(tool_calls=[call("write_file", file_path="app.py", content=USER + "\nextra: int = 1\n")]),
             Reply(text="first"))
    await h.run()
    assert h.of("file_changed")[0].diagnostics == []
    (client,) = h.session.lsp.running()
    os.killpg(client.client._server.pid, 9)
    await asyncio.wait_for(client.client._server.wait(), 10)
    h.script(Reply(tool_calls=[call("write_file", file_path="app.py", content=USER),
                               call("lsp_definition", file_path="app.py", line=7, symbol="add")]),
             Reply(text="second"))
    complete = await h.run()
    assert complete.success and h.read("app.py") == USER
    assert h.of("file_changed")[1].diagnostics is None
    warnings = [w.message for w in h.of("warning") if "language server" in w.message]
    assert len(warnings) == 1 and "exited" in warnings[0]
    assert "Error:" in h.last_tool_message()  # the call made before the tools were withdrawn says why


async def test_no_server_installed_is_said_once_and_offers_no_navigation(make_harness: Any) -> None:
    h = make_harness(files={"a.py": "x = 1\n"})
    _configure(h, command=["coder-tui-no-such-language-server"])
    h.script(Reply(tool_calls=[call("write_file", file_path="a.py", content="x = 2\n"),
                               call("write_file", file_path="b.py", content="y = 2\n")]),
             Reply(text="done"))
    assert "lsp_definition" not in [t.name for t in h.session.offered_tools()]
    complete = await h.run()
    assert complete.success
    warnings = [w.message for w in h.of("warning") if "language server" in w.message]
    assert warnings == ["language server for python (*.py, *.pyi): not installed (looked for "
                        "coder-tui-no-such-language-server on PATH); those files get no diagnostics or code "
                        "navigation this session"]


async def test_an_untrusted_folder_with_a_venv_does_not_start_pyright(make_harness: Any, tmp_path: Path) -> None:
    h = make_harness(files={"a.py": "x = 1\n", ".venv/bin/python": "#!/bin/sh\ntouch ran\n"})
    (h.root / ".venv" / "bin" / "python").chmod(0o755)
    h.script(Reply(tool_calls=[call("write_file", file_path="a.py", content="x: str = 2\n")]), Reply(text="done"))
    await h.run()
    assert h.of("file_changed")[0].diagnostics is None and not (h.root / "ran").exists()
    (warning,) = [w.message for w in h.of("warning") if "language server" in w.message]
    assert "not trusted and its .venv would make the server run the folder's own code" in warning


def test_run_json_carries_the_diagnostics_in_its_file_changed_event(fake_llm: Any, tmp_path: Path,
                                                                   isolated_home: Path) -> None:
    import json

    from tests.conftest import run_cli, write_files

    ws = write_files(tmp_path / "ws", {"util.py": MODULE, "app.py": USER})
    fake_llm.script(Reply(tool_calls=[call("replace_lines", file_path="app.py", start_line=3, end_line=3,
                                           new_content='total: int = add(1, "2")')]), Reply(text="Done."))
    done = run_cli(isolated_home, "run", "break it", "--workspace", str(ws), "--model", fake_llm.model,
                   "--api-base", fake_llm.url, "--api-key", "sk-test", "--mode", "allow", "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (changed,) = [e for e in events if e["type"] == "file_changed"]
    assert [(d["line"], d["column"], d["severity"]) for d in changed["diagnostics"]] == [(3, 21, "error")]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert "app.py:3:21 error: Argument of type \"Literal['2']\"" in result["output"]


async def test_a_server_gets_no_variable_named_like_a_secret(make_harness: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak-0001")
    monkeypatch.setenv("SOME_SETTING", "kept")
    h = make_harness(files={"a.py": "x = 1\n"})
    dump = h.root.parent / "env.json"
    script = f"import json, os, sys\njson.dump(dict(os.environ), open({str(dump)!r}, 'w'))\nfor _ in sys.stdin.buffer: pass"
    _configure(h, command=[sys.executable, "-c", script], timeout=1)
    h.script(Reply(tool_calls=[call("write_file", file_path="a.py", content="x = 2\n")]), Reply(text="done"))
    await h.run()
    import json

    seen = json.loads(dump.read_text())
    assert seen["SOME_SETTING"] == "kept" and "OPENAI_API_KEY" not in seen
    assert not any("sk-must-not-leak" in value for value in seen.values())
