"""Hostile paths and bytes (issue 10, items 1, 5, 7-11): links out of the workspace, NUL bytes and
over-long paths, FIFOs and huge patches, byte-exact edits, unread overwrites, the umask, and links
swapped in while a write is under way. Each test fails without the fix it names."""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.diffing import FileChange
from agent.tools.base import ToolContext, ToolError
from agent.tools.files import PatchFile, PatchFileArgs
from agent.workspaces.base import WorkspaceError
from agent.workspaces.local import LocalWorkspace
from tests.conftest import cli, cli_env
from tests.fakellm import FakeLLM, Reply, call

SECRET = "SECRET-OUTSIDE-LINE"


async def use(h: Any, name: str, **args: Any) -> str:
    """Have the model call one tool, then answer; return what the tool told the model."""
    h.script(Reply(tool_calls=[call(name, **args)]), Reply(text="ok"))
    complete = await h.run(f"use {name}")
    assert complete.completion_reason == "answered", complete
    return h.last_tool_message()


def headless(llm: FakeLLM, ws: Path, home: Path, *extra: str) -> list[str]:
    return cli("run", "go", "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
               "--api-key", "sk-test-paths-000", "--json", *extra)


def results(stdout: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, stdout.splitlines()) if e["type"] == "tool_result"]


# -- item 1: links leaving the workspace are listed as links, never followed --------------------
@pytest.fixture
def linked(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "passwd").write_text(f"root:x:0:0:{SECRET}\n" + "pad\n" * 3000)  # 12.7 KB
    (outside / "dir" / "inner.txt").write_text(f"{SECRET} in a folder\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "own.txt").write_text("own line\n")
    (root / "passwd").symlink_to(outside / "passwd")
    (root / "outdir").symlink_to(outside / "dir")
    (root / "alias.txt").symlink_to(root / "own.txt")
    return root


@pytest.mark.parametrize("path", ["", ".", "./"])
async def test_search_never_reads_through_links_out_even_in_plan_mode(make_harness: Any, linked: Path,
                                                                      path: str) -> None:
    h = make_harness(mode="plan", root=linked)
    out = await use(h, "search_code", pattern="SECRET|own line", path=path)
    assert SECRET not in out and out.splitlines() == ["own.txt:1:own line"]


async def test_list_dir_shows_links_and_no_size_of_files_outside(make_harness: Any, linked: Path) -> None:
    h = make_harness(mode="plan", root=linked)
    out = await use(h, "list_dir", path="")
    outside = linked.parent / "outside"
    assert f"passwd  (link to {outside / 'passwd'}, outside the workspace: not followed)" in out
    assert f"outdir  (link to {outside / 'dir'}, outside the workspace: not followed)" in out
    assert f"alias.txt  (link to {linked / 'own.txt'})" in out
    assert "KB" not in out and "outdir/" not in out
    info = await use(h, "get_project_info")
    assert "files (not ignored): 1" in info
    assert SECRET not in await use(h, "read_file", file_path="outdir/inner.txt")


# -- item 5: NUL bytes and over-long paths are tool errors, not a crash -------------------------
def test_nul_bytes_and_long_paths_are_errors_the_model_reads(fake_llm: FakeLLM, tmp_path: Path,
                                                            isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    bad = [
        call("read_file", file_path="a.py\x00.txt"),
        call("read_file", file_path="a" * 5000),
        call("list_dir", path="d/" * 3000),
        call("write_file", file_path="n" * 300 + ".py", content="x\n"),
        call("patch_file", file_path="a.py", patches=[{"old_text": "x\x00", "new_text": "y"}]),
        call("search_code", pattern="x", path="s" * 256),
        call("get_line_range", file_path="\ud800.py", start_line=1, end_line=1),
        call("bash_exec", command="echo hi\x00there"),
    ]
    fake_llm.script(Reply(tool_calls=bad), Reply(text="done"))
    done = subprocess.run(headless(fake_llm, ws, isolated_home, "--mode", "allow"), env=cli_env(isolated_home),
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    found = results(done.stdout)
    assert len(found) == len(bad) and not any(r["ok"] for r in found)
    errors = [r["error"] for r in found]
    assert "`file_path` contains a NUL byte" in errors[0]
    assert all("is too long" in e for e in errors[1:4]), errors
    assert "`patches[0].old_text` contains a NUL byte" in errors[4]
    assert "is too long" in errors[5] and "unpaired surrogate" in errors[6]
    assert "`command` contains a NUL byte" in errors[7]
    assert sorted(p.name for p in ws.iterdir()) == ["a.py"]


# -- item 7: special files are refused; a huge unmatched patch neither hangs nor blocks Ctrl+C ----
def test_fifos_are_refused_and_never_block(fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.py").write_text("x = 1\n")
    os.mkfifo(ws / "pipe")
    os.mkfifo(ws / "sub" / ".gitignore")  # read for every listing of sub: must not block either
    fake_llm.script(Reply(tool_calls=[call("read_file", file_path="pipe"), call("search_code", pattern="x"),
                                      call("list_dir", path="sub"), call("list_dir", path=""),
                                      call("write_file", file_path="pipe", content="y\n")]), Reply(text="done"))
    done = subprocess.run(headless(fake_llm, ws, isolated_home, "--mode", "allow"), env=cli_env(isolated_home),
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    read, search, sub, top, write = results(done.stdout)
    assert read["error"] == "pipe cannot be read: it is a named pipe (FIFO); only regular files are read"
    assert search["output"] == "a.py:1:x = 1"
    assert sub["output"] == "sub/\n.gitignore  (a named pipe (FIFO))"
    assert "pipe  (a named pipe (FIFO))" in top["output"]
    assert not write["ok"] and "named pipe" in write["error"]


def _unmatched_patch(folder: Path, lines: int) -> dict[str, Any]:
    """A file of similar lines and a patch whose old_text (lines long) matches none of them."""
    (folder / "big.py").write_text("".join(f"    value = compute(item_{i}, other={i % 7})  # step {i}\n"
                                           for i in range(60000)))
    old_text = "".join(f"    value = compute(item_{i}, other=Z)  # step\n" for i in range(lines))
    return {"file_path": "big.py", "patches": [{"old_text": old_text, "new_text": "x\n"}]}


async def test_huge_unmatched_patch_is_answered_quickly_off_the_event_loop(tmp_path: Path) -> None:
    args = PatchFileArgs.model_validate(_unmatched_patch(tmp_path, 9000))  # old_text: 430 KB
    ctx = ToolContext(workspace=LocalWorkspace(tmp_path), emit=lambda event: None)
    ticks: list[float] = []

    async def heartbeat() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    beating = asyncio.create_task(heartbeat())
    started = time.monotonic()
    with pytest.raises(ToolError) as refused:
        await PatchFile().prepare(args, ctx)
    took = time.monotonic() - started
    beating.cancel()
    assert took < 20  # minutes without a bound on the closest-match search
    assert "old_text was not found in big.py" in str(refused.value)
    assert "value = compute(item_0, other=0)" in str(refused.value)
    stalls = [b - a for a, b in zip(ticks, ticks[1:])]
    assert max(stalls) < max(0.25, took / 3), (max(stalls), took)  # the loop kept running meanwhile


def test_ctrl_c_stops_a_run_during_a_huge_patch(fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # 28 KB of old_text: streaming it through litellm stays short; the unbounded search took ~25 s.
    fake_llm.script(Reply(tool_calls=[call("patch_file", **_unmatched_patch(ws, 600))]), Reply(text="done"))
    proc = subprocess.Popen(headless(fake_llm, ws, isolated_home, "--mode", "allow"), env=cli_env(isolated_home),
                            text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if json.loads(line)["type"] == "tool_call":
                break
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        rest = [json.loads(line) for line in proc.stdout]
        assert proc.wait(60) in (0, 1) and time.monotonic() - started < 10
        assert rest[-1]["type"] == "complete"
    finally:
        proc.kill()
        proc.wait()


# -- item 8: only the edited lines change, byte for byte -----------------------------------------
async def test_mixed_endings_utf16be_and_late_nul_bytes(make_harness: Any, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "mixed.txt").write_bytes(b"one\r\ntwo\nthree\r\nfour\n")
    (root / "be.txt").write_bytes(codecs.BOM_UTF16_BE + "a\r\nb\r\n".encode("utf-16-be"))
    (root / "late.bin").write_bytes(b"text\n" * 2000 + b"\x00\x01binary")
    h = make_harness(root=root)
    await use(h, "replace_lines", file_path="mixed.txt", start_line=2, end_line=2, new_content="TWO")
    assert (h.root / "mixed.txt").read_bytes() == b"one\r\nTWO\nthree\r\nfour\n"
    await use(h, "replace_lines", file_path="be.txt", start_line=1, end_line=1, new_content="A")
    assert (h.root / "be.txt").read_bytes() == codecs.BOM_UTF16_BE + "A\r\nb\r\n".encode("utf-16-be")
    out = await use(h, "read_file", file_path="late.bin")
    assert out == "Error: late.bin is a binary file; the text tools do not read or edit it"


ENCODINGS = {"utf-8": b"", "utf-8-sig": b"", "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE,
             "latin-1": b""}
# Line text: no "\n" (it ends lines), no NUL (binary), no BOM character, no surrogate; a lone "\r"
# inside a line is kept as text, so it may appear anywhere but at the end.
_content = st.text(st.characters(blacklist_characters="\n\x00\ufeff", blacklist_categories=("Cs",)),
                   max_size=12).filter(lambda s: not s.endswith("\r"))
_ending = st.sampled_from(["\n", "\r\n"])


def _bytes(lines: list[str], encoding: str) -> bytes:
    return ENCODINGS[encoding] + "".join(lines).encode(encoding)


@st.composite
def edited_files(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """(encoding, the file's lines with their own ends, the same lines after one line edit)."""
    encoding = draw(st.sampled_from(sorted(ENCODINGS)))
    fits = _content.filter(lambda s: encoding != "latin-1" or all(ord(c) < 256 for c in s))
    # Numbered lines: a line diff of distinct lines has one answer, so the expected bytes are exact.
    drawn = draw(st.lists(st.tuples(fits, _ending), min_size=1, max_size=12))
    lines = [f"{number}:{text}{end}" for number, (text, end) in enumerate(drawn)]
    if encoding == "latin-1":
        lines.insert(0, "caf\xe9\n")  # not valid UTF-8, so the file is read as Latin-1
    if draw(st.booleans()):
        lines[-1] = lines[-1].rstrip("\r\n")  # no final newline
    index = draw(st.integers(0, len(lines) - 1))
    edited = list(lines)
    action = draw(st.sampled_from(["replace", "insert", "delete", "none"]))
    if action == "replace":
        old = lines[index]
        edited[index] = "new:" + draw(fits) + old[len(old.rstrip("\r\n")):]  # a changed line keeps its end
    elif action == "insert":  # an added line takes the file's main style (ties go to CRLF)
        crlf = sum(line.endswith("\r\n") for line in lines)
        main = "\r\n" if crlf and crlf >= sum(line.endswith("\n") for line in lines) - crlf else "\n"
        edited.insert(index, "new:" + draw(fits) + main)
    elif action == "delete" and index < len(lines) - 1:
        del edited[index]
    return encoding, lines, edited


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_files())
def test_an_edit_changes_only_the_edited_lines_bytes(case: tuple[str, list[str], list[str]]) -> None:
    encoding, lines, edited = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.txt"
        path.write_bytes(_bytes(lines, encoding))
        ws = LocalWorkspace(folder)
        old = asyncio.run(ws.read_text("f.txt"))
        new = "".join(line.replace("\r\n", "\n") for line in edited)
        asyncio.run(ws.apply([FileChange("f.txt", old, new)]))
        assert path.read_bytes() == _bytes(edited, encoding)


# -- item 9: an unread file changed during the session is not overwritten -------------------------
async def test_write_over_an_unread_file_changed_meanwhile_is_refused(make_harness: Any) -> None:
    h = make_harness(files={"notes.md": "first draft\n"})
    await use(h, "list_dir", path="")
    target = h.root / "notes.md"
    target.write_text("first draft\nthe user's new line\n")
    now = time.time_ns()  # the kernel stamps with a coarser clock; the edit is truly "now"
    os.utime(target, ns=(now, now))
    out = await use(h, "write_file", file_path="notes.md", content="model's version\n")
    assert out.startswith("Error: notes.md was modified at ") and "read_file notes.md first" in out
    out = await use(h, "replace_lines", file_path="notes.md", start_line=2, end_line=2, new_content="guess")
    assert out.startswith("Error: notes.md was modified at ")
    assert target.read_text() == "first draft\nthe user's new line\n"
    # a patch quotes the text it replaces, so it lands on the current content, keeping the user's line
    await use(h, "patch_file", file_path="notes.md", patches=[{"old_text": "first", "new_text": "second"}])
    assert target.read_text() == "second draft\nthe user's new line\n"
    await use(h, "read_file", file_path="notes.md")
    assert (await use(h, "write_file", file_path="notes.md", content="merged\n")).startswith("Edited notes.md")
    assert (await use(h, "write_file", file_path="fresh.md", content="1\n")).startswith("Created fresh.md")
    assert (await use(h, "write_file", file_path="fresh.md", content="2\n")).startswith("Edited fresh.md")


# -- item 10: new files honour the umask; existing files keep their mode ------------------------
@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
async def test_new_files_honour_the_umask(make_harness: Any, umask: int, expected: int) -> None:
    h = make_harness(files={"run.sh": "echo 1\n"})
    (h.root / "run.sh").chmod(0o750)
    previous = os.umask(umask)
    try:
        await use(h, "write_file", file_path="deep/new.txt", content="x\n")
        await use(h, "read_file", file_path="run.sh")
        await use(h, "write_file", file_path="run.sh", content="echo 2\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((h.root / "deep" / "new.txt").stat().st_mode) == expected
    assert stat.S_IMODE((h.root / "deep").stat().st_mode) == 0o777 & ~umask
    assert stat.S_IMODE((h.root / "run.sh").stat().st_mode) == 0o750


# -- item 11: a link swapped in after the check cannot carry a write outside ---------------------
@pytest.mark.parametrize("existing", [False, True])
async def test_a_folder_swapped_for_a_link_after_the_check_gets_no_write(tmp_path: Path, existing: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    if existing:
        (root / "sub" / "f.txt").write_text("inside\n")
        (outside / "f.txt").write_text("inside\n")  # same text, so only the path decides
    ws = LocalWorkspace(root)
    checked = ws._writable

    def check_then_swap(path: str) -> Any:
        found = checked(path)  # the path is checked while sub is a real folder ...
        (root / "sub").rename(tmp_path / "moved")  # ... then an attacker puts a link in its place
        (root / "sub").symlink_to(outside)
        return found

    monkeypatch.setattr(ws, "_writable", check_then_swap)
    with pytest.raises(WorkspaceError, match="symbolic link"):
        await ws.apply([FileChange("sub/f.txt", "inside\n" if existing else None, "written\n")])
    assert [p.read_text() for p in outside.iterdir()] == (["inside\n"] if existing else [])


async def test_a_file_swapped_for_a_link_after_the_check_is_refused(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside.txt"
    root.mkdir()
    (root / "f.txt").write_text("inside\n")
    outside.write_text("inside\n")
    ws = LocalWorkspace(root)
    checked = ws._writable

    def check_then_swap(path: str) -> Any:
        found = checked(path)
        (root / "f.txt").unlink()
        (root / "f.txt").symlink_to(outside)
        return found

    monkeypatch.setattr(ws, "_writable", check_then_swap)
    with pytest.raises(WorkspaceError, match="symbolic link"):
        await ws.apply([FileChange("f.txt", "inside\n", "written\n")])
    assert outside.read_text() == "inside\n" and (root / "f.txt").is_symlink()
