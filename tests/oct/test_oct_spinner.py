"""The spinner: one character at the end of the prompt line, replaced per frame, always removed."""

from __future__ import annotations

from pycrdt import Doc, Text

from agent.oct.anchors import apply_edit, take_snapshot
from agent.oct.positions import AFTER, PositionLog
from agent.oct.spinner import FRAMES, Spinner
from agent.oct.textpos import byte_offset
from agent.oct.triggers import mention_pattern

PROMPT = "# @agent add one\n"


def make(text: str = "x = 0\n" + PROMPT + "y = 1\n") -> tuple[Text, Spinner]:
    doc = Doc()
    ytext = doc.get("ws/a.py", type=Text)
    ytext += text
    positions = PositionLog(ytext)
    line = positions.anchor(byte_offset(text, text.index("# @agent")), AFTER)
    return ytext, Spinner(positions, line, mention_pattern("agent"), interval=3600)


def frames(ytext: Text) -> str:
    line = next(line for line in str(ytext).split("\n") if "@agent" in line)
    return line[len(PROMPT) - 1 :]


async def test_frames_replace_one_character_and_stop_removes_it():
    ytext, spinner = make()
    updates: list[bytes] = []
    ytext.doc.observe(lambda event: updates.append(event.update))
    spinner.start()
    assert frames(ytext) == FRAMES[0]
    for n in range(1, 6):
        spinner.step()
        assert frames(ytext) == FRAMES[n % 4]
    assert len(updates) == 6  # one transaction per frame
    await spinner.stop()
    assert str(ytext) == "x = 0\n" + PROMPT + "y = 1\n"


async def test_follows_the_line_when_people_type_above_and_comes_back_when_deleted():
    ytext, spinner = make()
    spinner.start()
    ytext.insert(0, "import os\n")
    spinner.step()
    assert str(ytext).startswith("import os\nx = 0\n# @agent add one/\n")
    at = byte_offset(str(ytext), str(ytext).index("/"))
    del ytext[at : at + 1]  # someone deletes the spinner
    assert spinner.span() is None
    spinner.step()
    assert frames(ytext) == FRAMES[2]
    await spinner.stop()
    assert "@agent add one\n" in str(ytext) and not any(f in str(ytext) for f in FRAMES)


async def test_gone_prompt_line_means_no_spinner():
    ytext, spinner = make("# @agent add one\nz\n")
    spinner.start()
    del ytext[0 : len(str(ytext))]
    ytext.insert(0, "unrelated\n")
    spinner.step()
    await spinner.stop()
    assert str(ytext) == "unrelated\n"


async def test_an_edit_removes_the_spinner_and_it_returns_on_the_next_frame():
    ytext, spinner = make()
    spinner.start()
    snapshot = take_snapshot("ws/a.py", spinner.positions, spinner.spans)
    assert "|" not in snapshot.text
    apply_edit(snapshot, snapshot.text.replace("y = 1", "y = 2"), spinner.spans)
    assert str(ytext) == "x = 0\n" + PROMPT + "y = 2\n"
    spinner.step()
    assert frames(ytext) in FRAMES
    await spinner.stop()
    assert str(ytext) == "x = 0\n" + PROMPT + "y = 2\n"


async def test_non_ascii_prompt_line():
    ytext, spinner = make("😀 = 1\n# @agent fais ça 😀\n")
    spinner.start()
    assert str(ytext) == "😀 = 1\n# @agent fais ça 😀|\n"
    spinner.step()
    assert str(ytext) == "😀 = 1\n# @agent fais ça 😀/\n"
    await spinner.stop()
    assert str(ytext) == "😀 = 1\n# @agent fais ça 😀\n"


async def test_two_spinners_in_one_document_are_both_masked():
    doc = Doc()
    ytext = doc.get("ws/a.py", type=Text)
    text = "# @agent one\nx = 1\n# @agent two\ny = 2\n"
    ytext += text
    positions = PositionLog(ytext)
    pattern = mention_pattern("agent")
    spinners = [Spinner(positions, positions.anchor(text.index(p), AFTER), pattern, interval=3600)
                for p in ("# @agent one", "# @agent two")]
    for spinner in spinners:
        spinner.start()
    assert str(ytext) == "# @agent one|\nx = 1\n# @agent two|\ny = 2\n"
    mask = lambda: [span for s in spinners for span in s.spans()]  # noqa: E731
    snapshot = take_snapshot("ws/a.py", positions, mask)
    assert snapshot.text == text
    snapshot = apply_edit(snapshot, text.replace("y = 2", "y = 3").replace("x = 1", "x = 0"), mask)
    assert str(ytext) == text.replace("y = 2", "y = 3").replace("x = 1", "x = 0")
    for spinner in spinners:
        spinner.step()
        await spinner.stop()
    assert str(ytext) == text.replace("y = 2", "y = 3").replace("x = 1", "x = 0")
