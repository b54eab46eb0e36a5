"""Hunks match difflib's unified diff exactly, and applying a subset of hunks is consistent."""

from __future__ import annotations

import re
import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.diffing import FileChange, apply_hunks, compute_hunks, split_lines, unified_diff

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "def f():\n", "    pass\n", "x", "\n"]), max_size=40)


def _text(parts: list[str]) -> str:
    # only the last line may lack its newline
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts[:-1]) + (parts[-1] if parts else "")


def _apply_unified(old: str, diff: str) -> str:
    """An independent applier for the diff text: rebuild the new file from hunk lines."""
    source, out, pos = split_lines(old), [], 0
    rows = diff.splitlines(keepends=True)[2:]
    i = 0
    while i < len(rows):
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", rows[i])
        assert header, rows[i]
        start, length = int(header[1]), int(header[2] or 1)
        begin = start - 1 if length else start
        out.extend(source[pos:begin])
        pos = begin
        i += 1
        while i < len(rows) and not rows[i].startswith("@@"):
            tag, body = rows[i][0], rows[i][1:]
            if i + 1 < len(rows) and rows[i + 1].startswith("\\"):
                body = body[:-1]
                i += 1
            if tag in " -":
                assert source[pos] == body
                pos += 1
            if tag in " +":
                out.append(body)
            i += 1
    out.extend(source[pos:])
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_unified_diff_applies_to_old_giving_new(a_parts: list[str], b_parts: list[str]) -> None:
    old, new = _text(a_parts), _text(b_parts)
    diff = unified_diff(old, new, "f.py")
    assert (diff == "") == (old == new)
    if diff:
        assert _apply_unified(old, diff) == new


def test_git_apply_accepts_the_diff(tmp_path) -> None:
    old = "".join(f"line {i}\n" for i in range(40))
    new = old.replace("line 3\n", "three\n").replace("line 30\n", "") + "tail"
    (tmp_path / "f.py").write_text(old)
    (tmp_path / "change.diff").write_text(unified_diff(old, new, "f.py"))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "change.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "f.py").read_text() == new


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.data())
def test_apply_hunks_all_none_and_subsets(a_parts: list[str], b_parts: list[str], data: st.DataObject) -> None:
    old, new = _text(a_parts), _text(b_parts)
    hunks = compute_hunks(split_lines(old), split_lines(new))
    assert apply_hunks(old, new, set(range(len(hunks)))) == new
    assert apply_hunks(old, new, set()) == old
    chosen = data.draw(st.sets(st.integers(0, max(0, len(hunks) - 1))))
    partial = apply_hunks(old, new, chosen & set(range(len(hunks))))
    # applying the rest of the hunks on top of the partial result reaches the full change
    remaining = compute_hunks(split_lines(partial), split_lines(new))
    assert apply_hunks(partial, new, set(range(len(remaining)))) == new


def test_large_file_small_edit_is_one_hunk() -> None:
    old = "".join(f"line {i}\n" for i in range(100_000))
    new = old.replace("line 50000\n", "changed\n")
    change = FileChange("big.txt", old, new)
    assert len(change.hunks()) == 1
    assert change.changed_lines() == (50001, 50001)
    assert "-line 50000\n+changed\n" in change.unified_diff()


def test_created_and_deleted_headers() -> None:
    assert unified_diff(None, "a\n", "n.py").startswith("--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@")
    assert unified_diff("a\n", None, "n.py").startswith("--- a/n.py\n+++ /dev/null\n")
    assert unified_diff("same\n", "same\n", "n.py") == ""
