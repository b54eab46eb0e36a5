"""The diff model: built from FileChange hunks or parsed from unified text, the two must agree."""

from __future__ import annotations

import pytest
from pygments.token import Token

from agent.diffing import FileChange
from tui.widgets.diffmodel import (
    FILE, GAP, HUNK, LINE, PAIR, DiffLine, Row, display_text, from_change, layout_rows, parse_unified,
    split_pairs, to_unified, tokenize,
)

OLD = "".join(f"line {i}\n" for i in range(30))
THREE_HUNKS = OLD.replace("line 2\n", "LINE 2\n").replace("line 14\n", "LINE 14\nextra\n").replace("line 26\n", "")

CASES = {
    "three hunks": FileChange("src/a.py", OLD, THREE_HUNKS),
    "created": FileChange("new.txt", None, "one\ntwo\n"),
    "deleted": FileChange("gone.txt", "one\ntwo\n", None),
    "new loses final newline": FileChange("a.txt", "a\nb\n", "a\nB"),
    "old lacked final newline": FileChange("a.txt", "a\nb", "a\nb\nc\n"),
    "both lack final newline": FileChange("a.txt", "a\nb", "a\nc"),
    "crlf and tabs": FileChange("w.c", "int a;\r\n\tint b;\r\n", "int a;\r\n\tint c;\r\n"),
    "emptied file": FileChange("e.txt", "x\ny\n", ""),
    "removed line looks like a header": FileChange("h.txt", "-- a\n--- b\n+++ c\nd\n", "d\n"),
}


@pytest.mark.parametrize("name", CASES)
def test_model_from_change_writes_the_same_unified_diff(name: str) -> None:
    change = CASES[name]
    assert to_unified(from_change(change)) == change.unified_diff()


@pytest.mark.parametrize("name", CASES)
def test_parsing_the_unified_diff_gives_the_same_model(name: str) -> None:
    change = CASES[name]
    parsed = parse_unified(change.unified_diff())
    assert parsed == [from_change(change)]
    assert to_unified(parsed[0]) == change.unified_diff()


def test_hunks_are_numbered_like_filechange_hunks_with_line_numbers() -> None:
    change = CASES["three hunks"]
    model = from_change(change)
    assert [h.index for h in model.hunks] == list(range(len(change.hunks()))) == [0, 1, 2]
    assert (model.added, model.removed) == (3, 3)
    first = model.hunks[0]
    assert first.header == "@@ -1,6 +1,6 @@"
    assert first.lines[2] == DiffLine("removed", 3, None, "line 2")
    assert first.lines[3] == DiffLine("added", None, 3, "LINE 2")
    assert first.lines[4] == DiffLine("context", 4, 4, "line 3")
    # After hunk 1 adds a line, new numbers run one ahead of old ones.
    third = model.hunks[2]
    assert third.lines[0] == DiffLine("context", 24, 25, "line 23")
    assert DiffLine("removed", 27, None, "line 26") in third.lines


def test_created_and_deleted_files() -> None:
    created = from_change(CASES["created"])
    assert created.created and not created.deleted
    assert created.hunks[0].header == "@@ -0,0 +1,2 @@"
    assert [(line.tag, line.old_no, line.new_no) for line in created.hunks[0].lines] == [
        ("added", None, 1), ("added", None, 2)]
    deleted = parse_unified(CASES["deleted"].unified_diff())[0]
    assert deleted.deleted and not deleted.created and deleted.path == "gone.txt"
    assert [line.tag for line in deleted.hunks[0].lines] == ["removed", "removed"]


def test_no_newline_at_end_marks_the_right_lines() -> None:
    model = parse_unified(CASES["both lack final newline"].unified_diff())[0]
    marked = [(line.tag, line.text) for line in model.hunks[0].lines if line.no_newline]
    assert marked == [("removed", "b"), ("added", "c")]
    model = from_change(CASES["new loses final newline"])
    assert [(line.tag, line.no_newline) for line in model.hunks[0].lines] == [
        ("context", False), ("removed", False), ("added", True)]


def test_crlf_stays_in_the_text() -> None:
    model = parse_unified(CASES["crlf and tabs"].unified_diff())[0]
    assert [line.text for line in model.hunks[0].lines] == ["int a;\r", "\tint b;\r", "\tint c;\r"]


def test_several_files_and_git_extras_parse() -> None:
    text = (
        "diff --git a/one.py b/one.py\nindex 123..456 100644\n" + CASES["three hunks"].unified_diff()
        + "diff --git a/new.txt b/new.txt\nnew file mode 100644\n" + CASES["created"].unified_diff()
    )
    files = parse_unified(text)
    assert [f.path for f in files] == ["src/a.py", "new.txt"]
    assert [len(f.hunks) for f in files] == [3, 1]
    assert files[1].created


def test_headerless_hunks_take_the_given_path_and_keep_section_text() -> None:
    text = "@@ -3,2 +3,2 @@ def main():\n keep\n-old\n+new\n"
    (file,) = parse_unified(text, path="src/m.py")
    assert file.path == "src/m.py"
    assert file.hunks[0].section == " def main():"
    assert [(line.tag, line.old_no, line.new_no) for line in file.hunks[0].lines] == [
        ("context", 3, 3), ("removed", 4, None), ("added", None, 4)]


def test_parse_of_nothing_is_no_files() -> None:
    assert parse_unified("") == []


def test_split_pairs_removed_beside_added() -> None:
    change = FileChange("p.txt", "a\nb\nc\nd\ne\n", "a\nB\nC\nX\nd\ne\nf\n")
    hunk = from_change(change).hunks[0]
    rows = [
        (None if left is None else hunk.lines[left].text, None if right is None else hunk.lines[right].text)
        for left, right in split_pairs(hunk)
    ]
    assert rows == [("a", "a"), ("b", "B"), ("c", "C"), (None, "X"), ("d", "d"), ("e", "e"), (None, "f")]


def test_split_pairs_do_not_pair_a_removal_with_earlier_additions() -> None:
    text = "@@ -1,2 +1,2 @@\n+x\n-a\n+y\n-b\n"
    hunk = parse_unified(text, path="t")[0].hunks[0]
    pairs = split_pairs(hunk)
    # Each line shows exactly once on its own side.
    assert sorted(left for left, _ in pairs if left is not None) == [1, 3]
    assert sorted(right for _, right in pairs if right is not None) == [0, 2]
    for left, right in pairs:
        assert left is None or hunk.lines[left].tag == "removed"
        assert right is None or hunk.lines[right].tag == "added"


def test_tokenize_keeps_lines_aligned_across_multiline_tokens() -> None:
    texts = ["", "x = '''a", "b'''", "", "# done"]
    lines = tokenize("m.py", texts)
    assert ["".join(text for _, text in line) for line in lines] == texts
    assert lines[2][0][0] in Token.Literal.String  # the string opened on the line above
    assert lines[4][0][0] in Token.Comment
    assert all(token in Token.Text for line in tokenize("notes.unknown-ext", ["a b"]) for token, _ in line)


def test_display_text_expands_tabs_and_shows_control_characters() -> None:
    assert display_text("\tx = 1\r") == "    x = 1"
    assert display_text("a\x1bb\x7f") == "a\u241bb\u2421"


def test_layout_rows_unified_and_split() -> None:
    files = [from_change(CASES["three hunks"]), from_change(CASES["created"])]
    rows, spans = layout_rows(files, split=False)
    kinds = [row.kind for row in rows]
    assert kinds[:2] == [FILE, HUNK] and kinds.count(FILE) == 2 and kinds.count(GAP) == 1
    assert kinds.count(LINE) == sum(len(h.lines) for f in files for h in f.hunks)
    start, end = spans[(0, 1)]
    assert rows[start] == Row(HUNK, 0, 1)
    assert all(row.kind == LINE and row.hunk == 1 for row in rows[start + 1 : end])
    split_rows, _ = layout_rows(files, split=True)
    pairs = [row for row in split_rows if row.kind == PAIR]
    assert len(pairs) == sum(len(split_pairs(h)) for f in files for h in f.hunks) < kinds.count(LINE)
