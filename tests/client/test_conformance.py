"""Every behaviour a front end relies on, run on both session handles (tests/client/conftest.py):
a behaviour one handle has and the other lacks fails here."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from agent.client.commands import Answer, Note, Prompt, SetMode, SetProfile, Stop
from tests.client.conftest import Watcher, text_of
from tests.fakellm import FakeLLM, Reply, call

EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2, new_content="    return 2")])
WRITE = Reply(tool_calls=[call("write_file", file_path="new.txt", content="written\n")])


async def test_plan_mode_set_for_a_turn_blocks_its_writes(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="allow")
    fake_llm.script(WRITE, EDIT, Reply(text="Planned only."))
    assert (await handle.submit(SetMode("plan"))).ok
    reply = await handle.submit(Prompt("write the files"))
    assert reply.ok and reply.data["completion_reason"] != "error", reply
    assert handle.mode == "plan"
    assert not (ws / "new.txt").exists()
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n"


async def test_allow_mode_writes_the_same_turn(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    """The control of the test above: without plan mode the same turn writes."""
    handle = await open_handle(mode="plan")
    fake_llm.script(WRITE, Reply(text="Done."))
    assert (await handle.submit(SetMode("allow"))).ok
    assert (await handle.submit(Prompt("write the file"))).ok
    assert (ws / "new.txt").read_text() == "written\n"


async def test_a_setting_that_is_none_is_refused(open_handle) -> None:
    handle = await open_handle()
    bad_mode = await handle.submit(SetMode("yolo"))  # type: ignore[arg-type]
    bad_agent = await handle.submit(SetProfile("no-such-agent"))
    assert not bad_mode.ok and "plan, ask or allow" in str(bad_mode.error)
    assert not bad_agent.ok and "no-such-agent" in str(bad_agent.error)
    assert handle.mode == "ask"


async def test_the_first_answer_wins_and_a_late_one_is_refused(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="ask", name="terminal")
    watch = Watcher(handle)
    fake_llm.script(EDIT, Reply(text="Edited."))
    turn = asyncio.create_task(handle.submit(Prompt("edit a.py")))
    asked = await watch.until("approval_required")
    # a second front end of the session: another client of the host; in this process, the same handle
    peer = await open_handle(session=handle.session_id, name="phone") if open_handle.kind == "hosted" else handle
    assert asked.approval_id in peer.pending
    first = await peer.submit(Answer(asked.approval_id, "allow_once"))
    late = await handle.submit(Answer(asked.approval_id, "deny"))
    reply = await turn
    assert first.ok, first
    assert not late.ok and late.kind == "conflict" and f"by {peer.name}" in str(late.error)
    assert reply.ok and reply.data["success"] is True
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"
    answered = await watch.until("approval_answered")
    assert answered.data["by"] == peer.name
    missing = await handle.submit(Answer("ap_nothing", "allow_once"))
    assert not missing.ok and missing.kind == "not_found"


async def test_a_stop_answers_every_queued_prompt(open_handle, fake_llm: FakeLLM) -> None:
    handle = await open_handle(mode="allow")
    watch = Watcher(handle)
    release = threading.Event()
    fake_llm.script(Reply(text="slow", hold=release))
    try:
        running = asyncio.create_task(handle.submit(Prompt("first")))
        await watch.until("step_started")
        queued = [asyncio.create_task(handle.submit(Prompt(text))) for text in ("second", "third")]
        await watch.until("prompt_queued", prompt="third")
        stopped = await handle.submit(Stop())
        replies = await asyncio.wait_for(asyncio.gather(*queued), 60)
        first = await asyncio.wait_for(running, 60)
    finally:
        release.set()
    assert stopped.ok and len(stopped.data["dropped"]) == 2
    assert all(reply.ok and reply.stopped and reply.data["dropped"] for reply in replies)
    assert first.stopped
    dropped = await watch.until("prompts_dropped")
    assert [p["prompt"] for p in dropped.data["prompts"]] == ["second", "third"]
    started = [item.data["prompt"] for item in watch.items if item.type == "turn_started"]
    assert started == ["first"]  # the dropped prompts never ran


async def test_history_replays_the_session_so_far(open_handle, fake_llm: FakeLLM) -> None:
    handle = await open_handle(mode="allow")
    fake_llm.script(Reply(text="Hello from the first turn."))
    assert (await handle.submit(Prompt("say hello"))).ok
    late = await open_handle(session=handle.session_id, name="late") if open_handle.kind == "hosted" else handle
    history = late.history()
    assert text_of(history) == "Hello from the first turn."
    kinds = [item.type for item in history]
    assert kinds.index("turn_started") < kinds.index("run_started") < kinds.index("turn_done")
    assert any(isinstance(item, Note) and item.data.get("by") == handle.name for item in history)


async def test_resume_replays_the_record_and_continues(open_handle, fake_llm: FakeLLM) -> None:
    handle = await open_handle(mode="allow")
    fake_llm.script(Reply(text="Remember 42."), Reply(text="It was 42."))
    assert (await handle.submit(Prompt("remember a number"))).ok
    session_id = handle.session_id
    await handle.close()
    if open_handle.kind == "hosted":  # the host keeps a session live while it runs or has clients: let it close
        from tests.client.test_conformance import wait_closed

        await wait_closed(open_handle.host, session_id)
    again = await open_handle(mode="allow", session=session_id[:8])
    assert again.session_id == session_id
    assert "Remember 42." in [getattr(item, "final_response", None) for item in again.history()]
    reply = await again.submit(Prompt("which number?"))
    assert reply.ok and reply.data["success"] is True
    assert "remember a number" in str(fake_llm.requests[-1])


async def wait_closed(host, session_id: str, timeout: float = 60) -> None:
    """Until the host no longer lists the session live (its record closed)."""
    from agent.host.client import live_sessions

    deadline = asyncio.get_running_loop().time() + timeout
    while any(row["session_id"] == session_id for row in await live_sessions(host.socket) or []):
        assert asyncio.get_running_loop().time() < deadline, "the host kept the session live"
        await asyncio.sleep(0.05)


async def test_a_turns_events_reach_a_listener_after_its_turn_started_and_before_its_reply(
        open_handle, fake_llm: FakeLLM) -> None:
    """What serve's one driver (agent/frontends/serve/driver.py) relies on to tell its own turn from
    another front end's: `turn_started` names the handle that sent the prompt, and the turn's events,
    its `complete` among them, reach `listen` before the prompt is answered."""
    handle = await open_handle(name="serve #1")
    seen: list[object] = []
    handle.listen(seen.append)
    fake_llm.script(Reply(text="Hello there."))
    reply = await handle.submit(Prompt("say hello"))
    assert reply.ok, reply
    kinds = [item.type for item in seen]  # type: ignore[attr-defined]
    started = next(i for i, item in enumerate(seen) if isinstance(item, Note) and item.type == "turn_started")
    assert seen[started].data["by"] == "serve #1"  # type: ignore[attr-defined]
    assert "complete" in kinds[started:], kinds
    assert text_of(seen[started:]) == "Hello there."
    complete = next(item for item in seen[started:] if getattr(item, "type", None) == "complete")
    assert complete.success is reply.data["success"] is True  # type: ignore[attr-defined]
