"""The ACP front end's behaviour on both session handles (tests/client/conftest.py): the one driver
(agent/frontends/acp/session.py) over a session in this process and one in a real host process.
The editor's side is a recording connection (what the SDK's client connection is to the driver):
its updates kept, its permission answers scripted."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import AllowedOutcome, RequestPermissionResponse

from agent.client.commands import Prompt
from agent.frontends.acp.session import AcpSession
from agent.frontends.acp.withdraw import PermissionIds
from tests.client.conftest import Watcher
from tests.fakellm import FakeLLM, Reply, call

EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2, new_content="    return 2")])


class Editor:
    """The editor end of the ACP connection: updates kept in order, each permission request answered
    with `choice` (and kept)."""

    def __init__(self, choice: str = "allow_once") -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.choice = choice
        self.changed = asyncio.Event()

    async def session_update(self, session_id: str, update: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any]) -> Any:
        self.asked.append(tool_call)
        self.changed.set()
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.choice))

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == "agent_message_chunk")


async def driver(open_handle: Any, editor: Editor, ws: Path, mode: str, **kwargs: Any) -> AcpSession:
    handle = await open_handle(mode=mode, **kwargs)
    session = AcpSession(editor, PermissionIds(), ws)
    session.bind(handle, replay=kwargs.get("session") is not None)
    session.go()
    return session


def text_prompt(text: str) -> list[Any]:
    from acp import text_block

    return [text_block(text)]


async def test_an_ask_mode_edit_is_a_permission_request_and_the_turn_ends(open_handle, fake_llm: FakeLLM,
                                                                        ws: Path) -> None:
    editor = Editor("allow_once")
    session = await driver(open_handle, editor, ws, "ask")
    fake_llm.script(EDIT, Reply(text="Edited."))
    response = await asyncio.wait_for(session.prompt(text_prompt("edit a.py")), 60)
    assert response.stop_reason == "end_turn"
    assert [call.title for call in editor.asked] == ["Edit a.py"]
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"
    await session.stream.flush()
    assert "tool_call" in editor.kinds() and "Edited." in editor.text()
    assert "edit a.py" not in [getattr(u.content, "text", None) for u in editor.updates
                               if u.session_update == "user_message_chunk"]  # its own prompt is not echoed


async def test_a_rejected_permission_leaves_the_file(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    editor = Editor("reject")
    session = await driver(open_handle, editor, ws, "ask")
    fake_llm.script(EDIT, Reply(text="Left it."))
    assert (await asyncio.wait_for(session.prompt(text_prompt("edit a.py")), 60)).stop_reason == "end_turn"
    assert len(editor.asked) == 1
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n"


async def test_a_cancel_answers_the_editors_queued_prompt(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    """Another front end's turn runs; the editor's prompt queues behind it; session/cancel stops the
    run and answers the editor's prompt (cancelled) instead of leaving it hanging."""
    editor = Editor()
    session = await driver(open_handle, editor, ws, "allow")
    handle = session.h
    other = await open_handle(session=handle.session_id, name="terminal") if open_handle.kind == "hosted" else handle
    watch = Watcher(handle)
    release = threading.Event()
    fake_llm.script(Reply(text="a long task", hold=release))
    try:
        running = asyncio.create_task(other.submit(Prompt("a long task")))
        await watch.until("step_started")
        queued = asyncio.create_task(session.prompt(text_prompt("queued behind it")))
        await watch.until("prompt_queued")
        session.cancel()
        response = await asyncio.wait_for(queued, 60)
        await asyncio.wait_for(running, 60)
    finally:
        release.set()
    assert response.stop_reason == "cancelled"


async def test_set_mode_applies_to_the_session_and_a_bad_one_is_refused(open_handle, ws: Path) -> None:
    session = await driver(open_handle, Editor(), ws, "ask")
    await session.set_mode("plan")
    assert session.mode == "plan"
    with pytest.raises(RequestError):
        await session.set_mode("yolo")
    assert session.mode == "plan"


async def test_a_second_prompt_of_the_same_editor_is_refused_while_its_first_runs(open_handle, fake_llm: FakeLLM,
                                                                                ws: Path) -> None:
    session = await driver(open_handle, Editor(), ws, "allow")
    watch = Watcher(session.h)
    release = threading.Event()
    fake_llm.script(Reply(text="slow", hold=release), Reply(text="next"))
    try:
        first = asyncio.create_task(session.prompt(text_prompt("first")))
        await watch.until("step_started")
        with pytest.raises(RequestError):
            await session.prompt(text_prompt("second"))
    finally:
        release.set()
    assert (await asyncio.wait_for(first, 60)).stop_reason == "end_turn"
