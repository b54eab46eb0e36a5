"""The app's one driver (tui/controller.py `HandleController`) over both session handles: what the
user sees and does (a prompt queued behind a turn, Esc giving it back, the approval panel, the
mode key) is the same whether the session runs in this process or in the session host.

The app's display is a recording `SessionHost` (the seam the controller talks to, tui/ports.py);
the controller, the handles, the session and the host process are the real ones."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from agent.approval import ApprovalRequest, Decision
from agent.client.commands import Answer
from agent.client.handle import SessionHandle
from tests.client.conftest import Watcher
from tests.fakellm import FakeLLM, Reply, call
from tui.controller import HandleController

EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2, new_content="    return 2")])
WRITE = Reply(tool_calls=[call("write_file", file_path="new.txt", content="written\n")])


class Screen:
    """What the controller shows, kept in order; the approval panel answers from `answers`."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []  # (kind, text)
        self.events: list[Any] = []
        self.restored: list[str] = []
        self.asked: list[ApprovalRequest] = []
        self.closed: list[str] = []  # approval panels closed without an answer from here
        self.answers: asyncio.Queue[Decision] = asyncio.Queue()
        self.changed = asyncio.Event()

    def _seen(self) -> None:
        self.changed.set()

    async def until(self, check: Callable[[], bool], timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            self.changed.clear()
            assert time.monotonic() < deadline, (self.lines, self.events, self.restored)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), 0.05)  # a note changes state without a line

    # -- the SessionHost face ----------------------------------------------------------------
    async def ask_approval(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        self._seen()
        try:
            return await self.answers.get()
        except asyncio.CancelledError:
            self.closed.append(request.approval_id)
            self._seen()
            raise

    def plan_reviewer(self) -> Any:
        raise AssertionError("a handle's session reviews its plans where it runs")

    def show_prompt(self, text: str, mentions: list[str]) -> None:
        self.lines.append(("prompt", text))

    def agent_idle(self) -> None:
        pass

    def show_prompt_of(self, text: str, who: str) -> None:
        self.lines.append(("prompt", f"{who}: {text}"))
        self._seen()

    def notice(self, text: str, kind: str = "info") -> None:
        self.lines.append((kind, text))
        self._seen()

    def restore_prompt(self, text: str) -> None:
        self.restored.append(text)
        self._seen()

    def configuration_failed(self, message: str) -> None:
        raise AssertionError(message)

    def run_task(self, work: Coroutine[Any, Any, None], name: str, group: str = "default") -> None:
        raise AssertionError("the controller runs no work through the app")

    def show_event(self, event: Any) -> None:
        self.events.append(event)
        self._seen()


def drive(handle: SessionHandle, screen: Screen, ws: Path) -> HandleController:
    driver = HandleController(handle, screen, screen.show_event, workspace=str(ws))
    driver.history()
    driver.follow()
    return driver


def texts(screen: Screen) -> list[str]:
    return [text for _kind, text in screen.lines]


async def test_esc_gives_back_the_prompt_queued_behind_the_turn(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="allow", name="coder-tui app")
    screen = Screen()
    driver = drive(handle, screen, ws)
    release = threading.Event()
    fake_llm.script(Reply(text="slow", hold=release))
    try:
        assert driver.submit("first", []) == "started"
        await screen.until(lambda: any(type(e).__name__ == "StepStarted" for e in screen.events))
        assert driver.running
        assert driver.submit("second", []) == "host-queued"
        await screen.until(lambda: any(t.startswith("Queued in the session host behind 1") for t in texts(screen)))
        assert driver.stop()
        await screen.until(lambda: screen.restored == ["second"])
        await screen.until(lambda: not driver.running)
    finally:
        release.set()
    assert any(t.startswith("Stopped by coder-tui app: the queued prompt did not run") for t in texts(screen))
    assert "you: second" not in texts(screen)  # it never ran
    await driver.detach()


async def test_the_approval_panel_answers_the_session(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="ask", name="coder-tui app")
    screen = Screen()
    driver = drive(handle, screen, ws)
    fake_llm.script(EDIT, Reply(text="Edited."))
    driver.submit("edit a.py", [])
    await screen.until(lambda: bool(screen.asked))
    request = screen.asked[0]
    assert [change.path for change in request.changes] == ["a.py"]  # the panel's hunks: the session's change
    screen.answers.put_nowait(Decision("allow_once"))
    await screen.until(lambda: not driver.running and (ws / "a.py").read_text() == "def f():\n    return 2\n")
    await driver.detach()


async def test_an_answer_from_elsewhere_closes_the_panel(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="ask", name="coder-tui app")
    screen = Screen()
    driver = drive(handle, screen, ws)
    watch = Watcher(handle)
    fake_llm.script(EDIT, Reply(text="Edited."))
    driver.submit("edit a.py", [])
    asked = await watch.until("approval_required")
    await screen.until(lambda: bool(screen.asked))
    # another front end of the session: a client of the host; in this process, another driver of the handle
    peer = await open_handle(session=handle.session_id, name="phone") if open_handle.kind == "hosted" else handle
    assert (await peer.submit(Answer(asked.approval_id, "allow_once"))).ok
    await screen.until(lambda: screen.closed == [asked.approval_id])
    await screen.until(lambda: not driver.running)
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"
    if open_handle.kind == "hosted":
        assert "Approval answered by phone (allow_once)." in texts(screen)
    watch.stop()
    await driver.detach()


async def test_the_mode_key_sets_the_sessions_mode(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    """Shift+Tab in the app (`set_mode`) reaches the session on both handles: plan mode blocks writes
    (attached to the host, the app used to refuse to change it)."""
    handle = await open_handle(mode="allow", name="coder-tui app")
    screen = Screen()
    driver = drive(handle, screen, ws)
    watch = Watcher(handle)
    driver.set_mode("plan")
    await watch.until("mode_changed", mode="plan")
    assert driver.mode == "plan"
    fake_llm.script(WRITE, Reply(text="Planned only."))
    driver.submit("write the file", [])
    await watch.until("turn_done")
    assert not (ws / "new.txt").exists()
    watch.stop()
    await driver.detach()


async def test_a_mentioned_file_goes_with_the_prompt(open_handle, fake_llm: FakeLLM, ws: Path) -> None:
    handle = await open_handle(mode="allow", name="coder-tui app")
    screen = Screen()
    driver = drive(handle, screen, ws)
    watch = Watcher(handle)
    fake_llm.script(Reply(text="Read it."))
    driver.submit("what does @a.py return?", ["a.py"])
    started = await watch.until("turn_started")
    await watch.until("turn_done")
    assert started.data["prompt"] == "what does @a.py return?"  # the others see what the user typed
    sent = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert "return 1" in str(sent)
    watch.stop()
    await driver.detach()
