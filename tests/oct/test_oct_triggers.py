"""Trigger parsing and detection on real pycrdt updates; document windowing."""

from __future__ import annotations

import pytest
from pycrdt import Doc, Text

from agent.oct.textpos import byte_offset
from agent.oct.triggers import mention_pattern, prompt_from_chat, prompt_from_line, triggers_in_delta
from agent.oct.windowing import view_document, window_lines

AGENT = mention_pattern("agent")


@pytest.mark.parametrize("line, prompt", [
    ("# @agent add a docstring", "add a docstring"),
    ("// @Agent: rename x to y", "rename x to y"),
    ("-- @AGENT count the rows", "count the rows"),
    ("/* @agent explain this */", "explain this"),
    ("<!-- @agent add a title -->", "add a title"),
    ("x = 1  # TODO @agent, make this faster", "make this faster"),
    ("    # @agent fix the loop\r", "fix the loop"),
    ("# @agent", None),
    ("# @agents are here", None),
    ("mail bob@agent.com", None),
    ("# @agent-x do it", None),
    ("# nothing here", None),
])
def test_prompt_from_line(line, prompt):
    assert prompt_from_line(line, AGENT) == prompt


def test_prompt_from_chat():
    assert prompt_from_chat("@agent what does main.py do?", AGENT) == "what does main.py do?"
    assert prompt_from_chat("please explain the parser @agent", AGENT) == "please explain the parser"
    assert prompt_from_chat("hello everyone", AGENT) is None
    assert prompt_from_chat("@bob hi", mention_pattern("Bob")) == "hi"


class Peers:
    """A host doc and our doc; host edits reach ours as remote updates, observed like the client."""

    def __init__(self, initial: str = "") -> None:
        self.host, self.ours = Doc(), Doc()
        self.host_text = self.host.get("ws/a.py", type=Text)
        self.text = self.ours.get("ws/a.py", type=Text)
        self.found: list = []
        self.before = 0
        self.text.observe(self._observe)
        if initial:
            self.host_text += initial
            self.sync()

    def _observe(self, event) -> None:
        delta = list(event.delta)
        inserted = sum(len(op["insert"].encode()) for op in delta if "insert" in op)
        deleted = sum(op.get("delete", 0) for op in delta)
        before = len(self.text) - inserted + deleted
        self.found += triggers_in_delta("ws/a.py", delta, before, lambda: str(self.text), AGENT)

    def sync(self) -> None:
        self.ours.apply_update(self.host.get_update(self.ours.get_state()))

    def type(self, index: int, text: str) -> None:
        """Type text at string index, one character per update (pycrdt counts bytes)."""
        for offset, char in enumerate(text):
            self.host_text.insert(byte_offset(str(self.host_text), index + offset), char)
            self.sync()


def test_typing_enter_after_a_prompt_triggers_once():
    peers = Peers("import os\n\n")
    peers.type(len("import os\n"), "# @agent list files\n")
    assert [(t.prompt, t.line, t.path) for t in peers.found] == [("list files", 1, "ws/a.py")]
    assert peers.found[0].line_offset == len("import os\n")


def test_pasted_block_triggers_for_each_prompt_line():
    peers = Peers("x = 1\n")
    with peers.host.transaction():
        peers.host_text.insert(6, "# @agent one\ny = 2\n// @agent two\n")
    peers.sync()
    assert [t.prompt for t in peers.found] == ["one", "two"]
    assert [t.line for t in peers.found] == [1, 3]


def test_newline_inside_a_prompt_line_triggers_with_the_completed_part():
    peers = Peers("# @agent add tests please\nend\n")
    peers.type(len("# @agent add tests"), "\n")
    assert [t.prompt for t in peers.found] == ["add tests"]


def test_shared_content_and_non_newline_edits_do_not_trigger():
    peers = Peers("# @agent this was already here\n")  # a host sharing a file is not typing
    peers.type(0, "abc")
    assert peers.found == []


def test_non_ascii_text_before_the_prompt():
    peers = Peers("café = '☕'\n")
    peers.type(len("café = '☕'\n"), "# @agent translate ünïcode\n")
    assert [t.prompt for t in peers.found] == ["translate ünïcode"]
    assert peers.found[0].line_offset == len("café = '☕'\n".encode())


def test_small_documents_are_shown_whole_with_numbers():
    view = view_document("ws/a.py", "a\nb\r\nc", focus=0)
    assert view.body == "1\ta\n2\tb\n3\tc"
    assert not view.windowed and view.total_lines == 3


def test_long_documents_are_windowed_around_the_prompt_with_true_numbers():
    lines = [f"line {n:05d} " + "x" * 40 for n in range(1, 2001)]  # ~100 KB
    text = "\n".join(lines)
    focus = text.index("line 01000")
    first, last = window_lines(text, focus)
    shown = "\n".join(lines[first:last])
    assert 20_000 <= len(shown) <= 24_100
    assert first < 999 < last
    view = view_document("ws/big.py", text, focus)
    body = view.body.split("\n")
    assert body[0].lstrip() == f"{first + 1}\t{lines[first]}"  # numbers true to the document
    assert body[-1].lstrip() == f"{last}\t{lines[last - 1]}"
    assert view.windowed and "of 2000" in view.header()


def test_window_keeps_the_prompt_line_even_when_it_is_huge():
    text = "a\n" + "b" * 50_000 + "\nc"
    first, last = window_lines(text, 10)
    assert first <= 1 < last
