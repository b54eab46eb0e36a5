"""The model is told what happened outside its turns: a restore of the files, a stopped answer
(issue 26 item 5). Checked on the request the scripted model receives next."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent.session.notes import NOTE_PREFIX, STOPPED
from agent.session.record import load
from tests.fakellm import Reply, call


async def test_a_restore_leaves_a_note_the_next_request_carries(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "original\n"})
    h.script(Reply(tool_calls=[call("write_file", file_path="cli.py", content="print(1)\n")]),
             Reply(text="Added cli.py."))
    await h.run("add a cli")
    restored, saved = await h.session.undo()
    assert not (h.root / "cli.py").exists()
    h.script(Reply(text="ok"))
    await h.run("what is there now?")
    sent = h.llm.requests[-1]["messages"]
    notes = [m["content"] for m in sent if m["role"] == "user" and m["content"].startswith(NOTE_PREFIX)]
    assert len(notes) == 1 and f"restored checkpoint {restored.id}" in notes[0] and saved.id in notes[0]
    assert [m["role"] for m in sent[-2:]] == ["user", "user"] and sent[-1]["content"] == "what is there now?"
    recorded = load(h.session.writer.path)
    assert any(m.get("content", "").startswith(NOTE_PREFIX) for m in recorded.messages if m["role"] == "user")


async def test_a_stopped_answer_stays_in_the_history_marked_as_cut(make_harness: Any) -> None:
    h = make_harness()
    h.script(Reply(text="partial words " * 400, chunk_size=7, chunk_delay=0.01))
    task = asyncio.create_task(h.run("talk"))
    deadline = time.monotonic() + 60
    while not any(e.type == "text_delta" for e in h.events):
        assert time.monotonic() < deadline, "no text streamed"
        await asyncio.sleep(0.02)
    h.session.stop()
    complete = await asyncio.wait_for(task, 60)
    assert complete.completion_reason == "stopped"
    h.script(Reply(text="ok"))
    await h.run("go on")
    sent = [m for m in h.llm.requests[-1]["messages"] if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]  # no bare consecutive prompts
    answer = sent[1]["content"]
    assert answer.startswith("partial") and answer.endswith(STOPPED)  # what was streamed before the stop
