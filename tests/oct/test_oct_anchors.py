"""Sticky-index edits: the model's line edits land where it meant them while people keep typing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycrdt import Doc, Text

from agent.oct.anchors import apply_edit, take_snapshot
from agent.oct.positions import PositionLog
from agent.oct.textpos import byte_offset
from agent.workspaces.base import ConflictError

BASE = "def a():\n    return 1\n\ndef b():\n    return 2\n"


class Room:
    """The agent's doc and a human's doc (the host); sync() exchanges updates both ways."""

    def __init__(self, text: str = BASE) -> None:
        self.agent, self.human = Doc(), Doc()
        self.text = self.agent.get("ws/a.py", type=Text)
        self.log = PositionLog(self.text)
        self.human_text = self.human.get("ws/a.py", type=Text)
        self.human_text += text
        self.sync()

    def sync(self) -> None:
        self.agent.apply_update(self.human.get_update(self.agent.get_state()))
        self.human.apply_update(self.agent.get_update(self.human.get_state()))

    def human_insert(self, index: int, value: str, sync: bool = True) -> None:
        """The human types at index of the text they see (they have seen everything so far)."""
        self.human.apply_update(self.agent.get_update(self.human.get_state()))
        self.human_text.insert(byte_offset(str(self.human_text), index), value)
        if sync:
            self.sync()

    def human_replace(self, old: str, new: str) -> None:
        current = str(self.human_text)
        start = byte_offset(current, current.index(old))
        with self.human.transaction():
            del self.human_text[start : start + len(old.encode())]
            self.human_text.insert(start, new)
        self.sync()


def test_plain_edit():
    room = Room()
    snap = take_snapshot("ws/a.py", room.log)
    assert snap.text == BASE
    apply_edit(snap, BASE.replace("return 2", "return 22"))
    assert str(room.text) == BASE.replace("return 2", "return 22")


def test_lines_inserted_above_do_not_move_the_edit():
    room = Room()
    snap = take_snapshot("ws/a.py", room.log)
    room.human_insert(0, "import os\nimport sys\n")
    apply_edit(snap, BASE.replace("    return 2", "    return 2 * 2"))
    assert str(room.text) == "import os\nimport sys\n" + BASE.replace("    return 2", "    return 2 * 2")


def test_typing_elsewhere_survives_and_converges_concurrently():
    room = Room()
    snap = take_snapshot("ws/a.py", room.log)
    room.human_insert(len("def a():\n    return 1"), "  # one", sync=False)  # not yet seen by the agent
    apply_edit(snap, BASE.replace("def b():", "def b(x):"))
    room.sync()
    expected = BASE.replace("return 1", "return 1  # one").replace("def b():", "def b(x):")
    assert str(room.text) == str(room.human_text) == expected


def test_insertion_lands_before_the_line_it_was_meant_for():
    room = Room()
    snap = take_snapshot("ws/a.py", room.log)
    room.human_insert(0, "# header\n")
    apply_edit(snap, BASE.replace("def b():", "def between():\n    pass\n\ndef b():"))
    assert str(room.text) == "# header\n" + BASE.replace("def b():", "def between():\n    pass\n\ndef b():")


def test_a_new_line_typed_right_below_the_target_is_kept():
    room = Room()
    snap = take_snapshot("ws/a.py", room.log)
    room.human_insert(len("def a():\n    return 1\n"), "# note\n")
    apply_edit(snap, BASE.replace("    return 1", "    return 100"))
    assert str(room.text) == "def a():\n    return 100\n# note\n\ndef b():\n    return 2\n"


@pytest.mark.parametrize("human", [
    lambda room: room.human_replace("return 2", "return 3"),  # the target line itself
    lambda room: room.human_insert(len(BASE) - len("    return 2\n"), "x"),  # typed at its start
    lambda room: room.human_insert(len(BASE) - 1, "!"),  # typed at its end
])
def test_edits_to_the_target_lines_are_refused_and_nothing_is_applied(human):
    room = Room()
    snap = take_snapshot("ws/a.py", room.log)
    human(room)
    before = str(room.text)
    with pytest.raises(ConflictError, match="re-read"):
        apply_edit(snap, BASE.replace("    return 2", "    return 20"))
    assert str(room.text) == before


def test_crlf_text_keeps_its_line_ends():
    room = Room("a\r\nb\r\nc\r\n")
    snap = take_snapshot("ws/a.py", room.log)
    assert snap.text == "a\nb\nc\n"
    apply_edit(snap, "a\nB\nB2\nc\n")
    assert str(room.text) == "a\r\nB\r\nB2\r\nc\r\n"


def test_non_ascii_and_appending_at_the_end():
    room = Room("é = 1\n")
    snap = take_snapshot("ws/a.py", room.log)
    room.human_insert(0, "☕\n")
    apply_edit(snap, "é = 1\nü = 2\n")
    assert str(room.text) == "☕\né = 1\nü = 2\n"


def test_empty_document():
    room = Room("")
    snap = take_snapshot("ws/a.py", room.log)
    apply_edit(snap, "print(1)\n")
    assert str(room.text) == "print(1)\n"


LINES = [f"line {n}\n" for n in range(12)]


@settings(max_examples=150, deadline=None)
@given(
    target=st.integers(0, 11),
    human_lines=st.lists(st.tuples(st.integers(0, 12), st.text("xyz", min_size=1, max_size=4)), max_size=5),
)
def test_new_lines_typed_anywhere_never_disturb_an_edit(target, human_lines):
    room = Room("".join(LINES))
    snap = take_snapshot("ws/a.py", room.log)
    current = list(LINES)
    for position, word in human_lines:  # whole new lines between existing ones
        index = len("".join(current[:position]))
        room.human_insert(index, word + "\n")  # seen by the agent before it edits
        current.insert(position, word + "\n")
    apply_edit(snap, "".join(LINES[:target] + [f"EDITED {target}\n"] + LINES[target + 1:]))
    room.sync()
    expected = "".join(f"EDITED {target}\n" if line == LINES[target] else line for line in current)
    assert str(room.text) == str(room.human_text) == expected


def test_follow_up_edits_use_the_text_the_model_believes():
    room = Room()
    snap = take_snapshot("ws/a.py", room.log)
    room.human_insert(0, "import os\n")
    first = BASE.replace("    return 1", "    return 10\n    # ten")
    snap = apply_edit(snap, first)
    assert snap.text == first  # what the model believes now (it never saw "import os")
    room.sync()
    room.human_insert(len(str(room.human_text)), "# end\n")
    room.human_insert(len("import os\n"), "# typed\n")
    second = first.replace("def b():", "def b(x):").replace("def a():", "def a(y):")
    snap = apply_edit(snap, second)
    assert snap.text == second
    assert str(room.text) == "import os\n# typed\n" + second + "# end\n"
    snap = apply_edit(snap, second.replace("    # ten\n", ""))  # a pure deletion of a line we wrote
    assert str(room.text) == "import os\n# typed\n" + second.replace("    # ten\n", "") + "# end\n"


step = st.one_of(
    st.tuples(st.just("human"), st.integers(0, 40), st.integers(0, 9)),
    st.tuples(st.just("replace"), st.integers(0, 40), st.integers(0, 2)),
    st.tuples(st.just("insert"), st.integers(0, 40), st.integers(1, 2)),
    st.tuples(st.just("delete"), st.integers(0, 40), st.integers(0, 0)),
)


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=10))
def test_chained_edits_with_people_typing_match_a_line_model(steps):
    """Model: a list of (line, seen_by_agent); people add unseen lines, the agent edits seen ones."""
    actual = [(f"l{n}\n", True) for n in range(6)]
    room = Room("".join(t for t, _ in actual))
    snap = take_snapshot("ws/a.py", room.log)
    for number, (kind, where, size) in enumerate(steps):
        seen = [i for i, (_, vis) in enumerate(actual) if vis]
        if kind == "human":
            pos = where % (len(actual) + 1)
            room.human_insert(len("".join(t for t, _ in actual[:pos])), f"h{number}\n")
            actual.insert(pos, (f"h{number}\n", False))
            continue
        if not seen and kind != "insert":
            continue
        believed = [actual[i][0] for i in seen]
        if kind == "insert":
            at = where % (len(seen) + 1)
            new = [(f"i{number}.{k}\n", True) for k in range(size)]
            pos = seen[at] if at < len(seen) else len(actual)
            if at == len(seen) and seen:
                pos = seen[-1] + 1  # appended right after the last line the agent knows
            believed[at:at] = [t for t, _ in new]
            actual[pos:pos] = new
        else:
            at = where % len(seen)
            new = [(f"r{number}.{k}\n", True) for k in range(size)] if kind == "replace" else []
            believed[at : at + 1] = [t for t, _ in new]
            actual[seen[at] : seen[at] + 1] = new
        snap = apply_edit(snap, "".join(believed))
        assert snap.text == "".join(believed)
    room.sync()
    assert str(room.text) == str(room.human_text) == "".join(t for t, _ in actual)
