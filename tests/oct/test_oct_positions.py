"""Sticky positions mapped through change deltas agree with Yjs relative positions.

For ASCII text pycrdt's own sticky indices are exact, so they serve as the reference under random
concurrent edits; for non-ASCII text ours must keep pointing at the same character. (Once the
character a position is bound to is deleted, Yjs and delta mapping may place later inserts at that
spot on different sides of it; the edits below never delete the bound characters.)
"""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pycrdt import Assoc, Doc, Text

from agent.oct.positions import AFTER, BEFORE, PositionLog, map_offset
from agent.oct.textpos import byte_offset


def test_map_offset_rules():
    insert_at_2 = [(0, 2), (1, 3)]
    assert map_offset(2, AFTER, insert_at_2) == 5  # bound to the character on the right
    assert map_offset(2, BEFORE, insert_at_2) == 2  # bound to the character on the left
    assert map_offset(1, AFTER, insert_at_2) == 1
    delete_2_to_4 = [(0, 2), (2, 2)]
    assert map_offset(3, AFTER, delete_2_to_4) == 2  # its character is gone: collapse
    assert map_offset(5, AFTER, delete_2_to_4) == 3


edit = st.tuples(st.sampled_from(["human", "agent"]), st.sampled_from(["insert", "delete"]),
                 st.floats(0, 1), st.text("ab\n", min_size=1, max_size=3), st.booleans())


@settings(max_examples=200, deadline=None)
@given(edits=st.lists(edit, max_size=12), where=st.floats(0, 1))
def test_agrees_with_yjs_relative_positions_on_ascii(edits, where):
    assume(sum(kind == "delete" for _, kind, *_ in edits) <= 2)
    agent, human = Doc(), Doc()
    text, other = agent.get("t", type=Text), human.get("t", type=Text)
    other += "0123456789\n0123456789\n"
    agent.apply_update(human.get_update())
    log = PositionLog(text)
    index = 11 + int(where * 10)  # on the second line; deletions below stay on the first
    ours = {assoc: log.anchor(index, assoc) for assoc in (AFTER, BEFORE)}
    theirs = {AFTER: text.sticky_index(index, Assoc.AFTER), BEFORE: text.sticky_index(index, Assoc.BEFORE)}
    for who, kind, at, value, sync in edits:
        target = text if who == "agent" else other
        pos = int(at * len(target))
        if kind == "insert":
            target.insert(pos, value)
        else:
            pos = int(at * 3)  # at most two of these: they never reach the second line
            del target[pos : pos + 2]
        if sync:
            agent.apply_update(human.get_update(agent.get_state()))
            human.apply_update(agent.get_update(human.get_state()))
    agent.apply_update(human.get_update(agent.get_state()))
    for assoc, reference in theirs.items():
        assert ours[assoc].resolve() == reference.get_index()


def test_non_ascii_text_keeps_the_character():
    doc = Doc()
    text = doc.get("t", type=Text)
    text += "héllo\nwörld\n"
    log = PositionLog(text)
    start = log.anchor(byte_offset(str(text), 6), AFTER)  # the "w"
    text.insert(0, "☕☕ é\n")
    text.insert(byte_offset(str(text), len("☕☕ é\nhéllo")), " ü")
    raw = str(text).encode()
    assert raw[start.resolve() :].decode().startswith("wörld")
