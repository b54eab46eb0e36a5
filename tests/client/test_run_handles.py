"""`run`'s one driver (agent/frontends/rundriver.py) on both session handles: the same stdin answers,
the same printing and the same exit codes whether the session runs in this process or in the
session host (tests/client/conftest.py opens each)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from agent.frontends.printing import TextPrinter
from agent.frontends.rundriver import UNANSWERED, RunDriver
from agent.session.ports import SessionOptions
from tests.fakellm import FakeLLM, Reply, call

EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2, new_content="    return 2")])


def driver_of(handle, prompt: str) -> tuple[RunDriver, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return RunDriver(handle, SessionOptions(prompt=prompt), printer=TextPrinter(out, err)), out, err


async def test_an_answer_typed_before_its_approval_answers_it(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="ask", name="run")
    fake_llm.script(EDIT, Reply(text="Edited."))
    driver, out, err = driver_of(handle, "make f return 2")
    driver.line("y\n")  # `echo y | coder-tui run ...`: the answer comes before the approval
    code = await asyncio.wait_for(driver.run(read_stdin=False), 60)
    assert code == 0, out.getvalue() + err.getvalue()
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"
    assert "Edited." in out.getvalue() + err.getvalue()


async def test_stdin_closed_denies_this_runs_approval_and_exits_3(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="ask", name="run")
    fake_llm.script(EDIT, Reply(text="Not edited."))
    driver, out, err = driver_of(handle, "make f return 2")
    driver.closed()  # `coder-tui run ... < /dev/null`
    code = await asyncio.wait_for(driver.run(read_stdin=False), 60)
    assert code == UNANSWERED, out.getvalue() + err.getvalue()
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n"
    assert "denied because stdin closed" in out.getvalue() + err.getvalue()


async def test_a_line_that_is_no_answer_is_refused_with_a_message(open_handle, fake_llm: FakeLLM) -> None:
    handle = await open_handle(mode="allow", name="run")
    fake_llm.script(Reply(text="Hi."))
    driver, out, err = driver_of(handle, "say hi")
    driver.line("maybe\n")
    code = await asyncio.wait_for(driver.run(read_stdin=False), 60)
    assert code == 0
    assert "ignored stdin line" in out.getvalue() + err.getvalue() and "Hi." in out.getvalue() + err.getvalue()


async def test_a_json_answer_with_edited_content_writes_what_the_user_wrote(open_handle, fake_llm: FakeLLM,
                                                                             ws: Path) -> None:
    """A decision line's `edited` reaches the session (it was dropped on the way to the host)."""
    handle = await open_handle(mode="ask", name="run")
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="new.txt", content="written\n")]),
                    Reply(text="Wrote it."))
    driver, out, err = driver_of(handle, "write new.txt")
    driver.line(json.dumps({"type": "decision", "decision": "allow_once", "edited": {"new.txt": "mine\n"}}))
    code = await asyncio.wait_for(driver.run(read_stdin=False), 60)
    assert code == 0, out.getvalue() + err.getvalue()
    assert (ws / "new.txt").read_text() == "mine\n"
