"""The three-way merge used when the work branch moved."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.github.merge import merge3

BASE = "".join(f"line {n}\n" for n in range(20))


def edit(text: str, index: int, new: str) -> str:
    lines = text.splitlines(True)
    lines[index] = new
    return "".join(lines)


def test_separate_regions_merge():
    ours = edit(BASE, 2, "ours\n")
    theirs = edit(BASE, 15, "theirs\n")
    clean, merged = merge3(BASE, ours, theirs)
    assert clean and merged == edit(edit(BASE, 2, "ours\n"), 15, "theirs\n")


def test_same_line_conflicts_unless_identical():
    assert merge3(BASE, edit(BASE, 5, "a\n"), edit(BASE, 5, "b\n")) == (False, None)
    assert merge3(BASE, edit(BASE, 5, "a\n"), edit(BASE, 5, "a\n")) == (True, edit(BASE, 5, "a\n"))


def test_adjacent_lines_conflict_like_git():
    assert merge3(BASE, edit(BASE, 5, "a\n"), edit(BASE, 6, "b\n"))[0] is False


def test_insertions_and_deletions():
    ours = BASE.replace("line 3\n", "")
    theirs = BASE + "appended\n"
    clean, merged = merge3(BASE, ours, theirs)
    assert clean and merged == BASE.replace("line 3\n", "") + "appended\n"


def test_presence_cases():
    assert merge3(None, "x\n", None) == (True, "x\n")  # only we created it
    assert merge3(None, "x\n", "y\n") == (False, None)  # both created, differently
    assert merge3(BASE, None, BASE) == (True, None)  # we deleted, they left it
    assert merge3(BASE, None, edit(BASE, 1, "z\n")) == (False, None)  # we deleted, they changed
    assert merge3(BASE, edit(BASE, 1, "z\n"), None) == (False, None)  # they deleted, we changed


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(lines, lines, lines)
def test_clean_merges_keep_both_sides_when_one_side_is_unchanged(base, ours, theirs):
    b, o, t = "".join(base), "".join(ours), "".join(theirs)
    assert merge3(b, o, b) == (True, o)
    assert merge3(b, b, t) == (True, t)
    clean, merged = merge3(b, o, t)
    if clean:
        # a clean merge of independent edits is symmetric
        assert merge3(b, t, o) == (True, merged)
