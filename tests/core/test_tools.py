"""Every tool, driven through the real loop: the model (scripted server) calls it, we check the effect."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from agent.tools import sandbox
from tests.fakellm import Reply, call


async def use(h: Any, name: str, _raw: str | None = None, **args: Any) -> str:
    """Have the model call one tool, then answer; return what the tool told the model."""
    h.script(Reply(tool_calls=[call(name, _raw, **args)]), Reply(text="ok"))
    complete = await h.run(f"use {name}")
    assert complete.completion_reason == "answered", complete
    return h.last_tool_message()


async def test_read_file_numbers_lines_and_pages_large_files(make_harness: Any) -> None:
    big = "".join(f"row {i}\n" for i in range(1, 3001))
    h = make_harness(files={"small.py": "a = 1\nb = 2\n", "big.txt": big})
    out = await use(h, "read_file", file_path="small.py")
    assert out == "small.py (2 lines, 12 B)\n     1\ta = 1\n     2\tb = 2"  # seed 003: sizes in results
    out = await use(h, "read_file", file_path="big.txt")
    assert "  2000\trow 2000" in out and "row 2001" not in out
    assert "call again with start_line=2001" in out
    out = await use(h, "read_file", file_path="big.txt", start_line=2999)
    assert out.endswith("  2999\trow 2999\n  3000\trow 3000")
    out = await use(h, "read_file", file_path="missing.py")
    assert out == "Error: missing.py does not exist"
    h.root.joinpath("one.txt").write_text("only\n")
    assert await use(h, "read_file", file_path="one.txt") == "one.txt (1 line, 5 B)\n     1\tonly"


async def test_get_line_range_and_its_errors(make_harness: Any) -> None:
    h = make_harness(files={"f.txt": "one\ntwo\nthree\n"})
    assert await use(h, "get_line_range", file_path="f.txt", start_line=2, end_line=3) == "     2\ttwo\n     3\tthree"
    out = await use(h, "get_line_range", file_path="f.txt", start_line=3, end_line=9)
    assert "[f.txt ends at line 3]" in out
    out = await use(h, "get_line_range", file_path="f.txt", start_line=7, end_line=9)
    assert out == "Error: start_line 7 is past the end of f.txt (3 lines)"


async def test_list_dir_and_project_info(make_harness: Any) -> None:
    h = make_harness(files={"pyproject.toml": "[project]\n", "src/m.py": "x\n", "AGENTS.md": "be nice\n"})
    out = await use(h, "list_dir", path="")
    assert out.splitlines()[:2] == ["./", "src/"] and "pyproject.toml  (10 B)" in out
    out = await use(h, "get_project_info")
    assert "project: Python project" in out and "files (not ignored): 3" in out
    assert "AGENTS.md present" in out


async def test_search_code_regex_literal_and_cap(make_harness: Any) -> None:
    h = make_harness(files={"a.py": "def alpha():\n    pass\n", "b.py": "x = alpha()\ny = alpha() + 1\n"})
    out = await use(h, "search_code", pattern=r"alpha\(\)")
    assert out.splitlines() == ["a.py:1:def alpha():", "b.py:1:x = alpha()", "b.py:2:y = alpha() + 1"]
    out = await use(h, "search_code", pattern="alpha() + 1", path="b.py")
    assert out.splitlines()[-1] == "b.py:2:y = alpha() + 1"
    out = await use(h, "search_code", pattern="alpha(", max_results=1)
    assert "as literal text" in out and "stopped at max_results=1" in out


async def test_todo_write_updates_the_plan(make_harness: Any) -> None:
    h = make_harness()
    todos = [{"id": "1", "content": "read", "status": "completed"},
             {"id": "2", "content": "edit", "status": "in_progress"}]
    out = await use(h, "todo_write", todos=todos)
    assert out.startswith("Plan updated (1/2 done)")
    assert [t.status for t in h.of("plan_updated")[-1].todos] == ["completed", "in_progress"]
    assert await use(h, "todo_read") == "[x] 1. read\n[~] 2. edit"
    out = await use(h, "todo_write", todos=[{"id": "1", "content": "a"}, {"id": "1", "content": "b"}])
    assert "used twice" in out


async def test_write_file_creates_and_keeps_final_newline(make_harness: Any) -> None:
    h = make_harness(files={"keep.txt": "old\n"})
    out = await use(h, "write_file", file_path="new/dir/n.py", content="x = 1\n")
    # one line is "1 line", and its region "line 1" (the model and `run` read "1 lines", "lines 1-1")
    assert out == "Created new/dir/n.py (1 line, 6 B). The file now has 1 line; line 1 now reads:\n     1\tx = 1"
    assert h.read("new/dir/n.py") == "x = 1\n"
    out = await use(h, "write_file", file_path="keep.txt", content="new")
    assert h.read("keep.txt") == "new\n" and out.startswith("Edited keep.txt: +1 -1 lines, now 4 B.")


async def test_patch_file_unique_ambiguous_missing(make_harness: Any) -> None:
    source = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    h = make_harness(files={"m.py": source})
    out = await use(h, "patch_file", file_path="m.py", patches=[{"old_text": "return 1", "new_text": "return 2"}])
    assert "occurs 2 times in m.py (at lines 2, 5)" in out and h.read("m.py") == source
    out = await use(h, "patch_file", file_path="m.py", patches=[{"old_text": "def c():\n    return 1", "new_text": ""}])
    assert "was not found in m.py" in out and "closest actual lines" in out and "def a():" in out
    patches = [{"old_text": "def b():\n    return 1", "new_text": "def b():\n    return 3"},
               {"old_text": "not there", "new_text": "x"}]
    out = await use(h, "patch_file", file_path="m.py", patches=patches)
    assert "patch 2 of 2" in out and h.read("m.py") == source  # all or nothing
    await use(h, "patch_file", file_path="m.py", patches=patches[:1])
    assert h.read("m.py") == source.replace("return 1\n", "return 3\n").replace("def a():\n    return 3", "def a():\n    return 1")


async def test_multi_edit_is_all_files_or_none(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "alpha\n", "b.txt": "beta\n"})
    edits = [{"file_path": "a.txt", "patches": [{"old_text": "alpha", "new_text": "ALPHA"}]},
             {"file_path": "b.txt", "patches": [{"old_text": "gamma", "new_text": "x"}]}]
    out = await use(h, "multi_edit", edits=edits)
    assert out.startswith("Error: edit 2 (b.txt)") and h.read("a.txt") == "alpha\n"
    edits[1]["patches"] = [{"old_text": "beta", "new_text": "BETA"}]
    await use(h, "multi_edit", edits=edits)
    assert (h.read("a.txt"), h.read("b.txt")) == ("ALPHA\n", "BETA\n")
    assert [e.path for e in h.of("file_changed")] == ["a.txt", "b.txt"]


async def test_line_tools(make_harness: Any) -> None:
    h = make_harness(files={"f.txt": "1\n2\n3\n4\n", "nonl.txt": "a\nb"})
    out = await use(h, "replace_lines", file_path="f.txt", start_line=2, end_line=3, new_content="two\nthree\nextra\n")
    assert h.read("f.txt") == "1\ntwo\nthree\nextra\n4\n"
    assert "lines 1-5 now read" in out and "     4\textra" in out
    await use(h, "insert_at_line", file_path="f.txt", line=1, content="0")
    await use(h, "insert_at_line", file_path="f.txt", line=7, content="end")
    assert h.read("f.txt") == "0\n1\ntwo\nthree\nextra\n4\nend\n"
    await use(h, "delete_lines", file_path="f.txt", start_line=4, end_line=5)
    assert h.read("f.txt") == "0\n1\ntwo\n4\nend\n"
    await use(h, "replace_lines", file_path="nonl.txt", start_line=2, end_line=2, new_content="B\n")
    assert h.read("nonl.txt") == "a\nB"
    out = await use(h, "insert_at_line", file_path="f.txt", line=9, content="x")
    assert out == "Error: line 9 is past the end of f.txt (5 lines; use line=6 to append)"
    out = await use(h, "delete_lines", file_path="f.txt", start_line=3, end_line=2)
    assert out == "Error: end_line 2 is before start_line 3"
    fc = h.of("file_changed")[0]
    assert (fc.line_start, fc.line_end, fc.reason) == (2, 4, "replace lines 2-3")


async def test_edit_after_external_change_is_refused_until_reread(make_harness: Any) -> None:
    h = make_harness(files={"f.txt": "a\nb\n"})
    await use(h, "read_file", file_path="f.txt")
    (h.root / "f.txt").write_text("a\nchanged by someone\n")
    out = await use(h, "replace_lines", file_path="f.txt", start_line=1, end_line=1, new_content="A")
    assert "changed since you last read it" in out and h.read("f.txt") == "a\nchanged by someone\n"
    await use(h, "read_file", file_path="f.txt")
    await use(h, "replace_lines", file_path="f.txt", start_line=1, end_line=1, new_content="A")
    assert h.read("f.txt") == "A\nchanged by someone\n"


async def test_bash_exec_output_exit_code_and_no_secrets(make_harness: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "hidden-value")
    monkeypatch.setenv("PLAIN_VALUE", "visible")
    monkeypatch.setenv("OTHER_VALUE", "not listed")
    h = make_harness()
    h.session.config.shell_env = ["PLAIN_VALUE", "MY_API_KEY"]  # a secret's name is never passed
    sandbox.configure(h.session)
    out = await use(h, "bash_exec", command="echo out; echo err >&2; echo $PLAIN_VALUE; echo ${MY_API_KEY:-unset}; "
                                            "echo ${OTHER_VALUE:-unset}; exit 3")
    assert out == "exit code: 3\n--- stdout ---\nout\nvisible\nunset\nunset\n--- stderr ---\nerr"


async def test_bash_exec_timeout_kills_the_whole_process_group(make_harness: Any) -> None:
    h = make_harness()
    out = await use(h, "bash_exec", command="(sleep 31.5; touch survived) & echo started; sleep 32.5", timeout=1)
    assert out.startswith("timed out after 1 s; the command's process group was killed")
    assert "started" in out
    running = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    assert not [line for line in running if line.strip() in ("sleep 31.5", "sleep 32.5")]


async def test_output_is_capped_with_a_visible_note(make_harness: Any) -> None:
    h = make_harness()
    out = await use(h, "bash_exec", command="python3 -c \"print('x' * 100000)\"")
    assert "characters cut" in out and len(out) < 40_000


async def test_persistent_shell_keeps_folder_and_variables(make_harness: Any) -> None:
    h = make_harness(files={"sub/f.txt": "x\n"})
    out = await use(h, "shell_open")
    assert out.startswith("session_id: sh1")
    await use(h, "shell_exec", session_id="sh1", command="cd sub && export GREETING=hello")
    out = await use(h, "shell_exec", session_id="sh1", command="pwd; echo $GREETING; ls; false")
    assert out.splitlines()[0] == "exit code: 1"
    assert out.splitlines()[1].endswith("/ws/sub") and out.splitlines()[2:] == ["hello", "f.txt"]
    assert await use(h, "shell_close", session_id="sh1") == "shell sh1 closed"
    out = await use(h, "shell_exec", session_id="sh1", command="pwd")
    assert "no shell 'sh1'" in out


async def test_shell_exec_timeout_kills_the_shell(make_harness: Any) -> None:
    h = make_harness()
    await use(h, "shell_open")
    out = await use(h, "shell_exec", session_id="sh1", command="sleep 20", timeout=1)
    assert "timed out after 1 s; shell sh1 was killed" in out
    assert "sh1" not in h.session.ctx.extras["shells"].sessions


def test_every_tool_example_is_a_valid_call() -> None:
    # seed 003's tool `examples`: shown to text-protocol models and in /help TOOL, so each must parse
    from agent.tools import default_tools
    from agent.tools.registry import ToolRegistry, describe_tool

    registry = ToolRegistry(default_tools())
    with_examples = [tool for tool in default_tools() if tool.examples]
    assert {"read_file", "write_file", "patch_file", "replace_lines", "search_code", "bash_exec"} <= {
        t.name for t in with_examples}
    for tool in with_examples:
        for example in tool.examples:
            registry.parse(tool, json.dumps(example))  # raises ArgumentError when an example is wrong
        assert "example: {" in describe_tool(tool)
