"""serve's one driver: a `Live` holds a `SessionHandle` (agent/client) and turns its items and
replies into serve's answers: the running turn's SSE/WebSocket/seed data, the follow log of
`GET /api/sessions/{id}/events`, the approvals a client may answer.

The handle is a session in this process (`LocalHandle`) or in the session host (`HostedHandle`):
the driver cannot tell them apart. A turn is one `Prompt`; its events are the ones between the
handle's `turn_started` naming this handle and the prompt's reply. Every other item (another
front end's turn in the host) goes to the follow log only, and its approvals are answerable here.

A follower first receives the session so far (the handle's history; streamed text joined), then
`{"type": "replay_end", "pending": [...], "running": ...}`, then each event as it happens, for as
long as it stays connected or the session lives (`{"type": "session_closed"}` ends the stream).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from agent import events as ev
from agent.client.commands import Note, Prompt, Reply, Stop
from agent.client.handle import Item, SessionHandle
from agent.consumer import EventHandler
from agent.frontends.seedevents import SeedMapper
from agent.frontends.serve.events import Data, SseMapper, approval_data
from agent.frontends.serve.request import ChatRequest
from agent.frontends.serve.resume import TurnFrames
from agent.planning.seedtypes import seed_task_type
from agent.secrets import redact
from agent.workspaces.overlay import OverlayWorkspace

KEEPALIVE = 15.0


class TurnFailed(Exception):
    """A turn the handle could not run (its reply's error, said to the client as it is)."""


def failure(exc: BaseException) -> str:
    """What a client is told of a turn that ended with an exception (the loop says its own errors as
    events): the handle's refusal as it is, anything else with its type."""
    text = str(exc) if isinstance(exc, TurnFailed) else f"{type(exc).__name__}: {exc}"
    return redact(f"the run failed: {text}")


def item_data(item: Item) -> Data:
    """A handle's item in the `run --json` shapes (a host line as the host sent it)."""
    if isinstance(item, Note):
        return dict(item.data)
    return json.loads(redact(item.model_dump_json()))  # type: ignore[attr-defined]


class EventLog:
    """A session's events so far and the queues of those who follow it."""

    def __init__(self, recorded: list[Data] | None = None) -> None:
        self.log: list[Data] = list(recorded or [])
        self.followers: set[asyncio.Queue[Data | None]] = set()

    def add(self, event: Item) -> None:
        data = item_data(event)
        if isinstance(event, ev.TextDelta) and self.log and self.log[-1].get("type") == "text_delta":
            self.log[-1] = {**self.log[-1], "text": self.log[-1]["text"] + event.text}
        else:
            self.log.append(data)
        for queue in self.followers:
            queue.put_nowait(data)

    def follow(self) -> tuple[list[Data], asyncio.Queue[Data | None]]:
        """The session so far and a queue of what comes next (taken together: nothing is missed)."""
        queue: asyncio.Queue[Data | None] = asyncio.Queue()
        self.followers.add(queue)
        return list(self.log), queue

    def leave(self, queue: asyncio.Queue[Data | None]) -> None:
        self.followers.discard(queue)

    def close(self) -> None:
        for queue in self.followers:
            queue.put_nowait(None)
        self.followers.clear()


@dataclass
class Live:
    handle: SessionHandle
    apply: str
    label: str  # the workspace's label (serve's folder or repository)
    root: Path | None = None  # the folder the session writes in (None: the client's buffers)
    overlay: OverlayWorkspace | None = None  # apply "client": the editor's buffers
    created: float = field(default_factory=time.time)
    prompt: str = ""
    pending: dict[str, Data] = field(default_factory=dict)  # approval id -> its event data (this turn's)
    asked: set[str] = field(default_factory=set)  # every approval id the session asked (any front end's turn)
    listener: Callable[[Data], None] | None = None
    task: asyncio.Task[Any] | None = None
    events: EventLog = field(default_factory=EventLog)  # for GET /api/sessions/{id}/events
    frames: TurnFrames = field(default_factory=TurnFrames)  # the latest streamed turn, numbered
    attached: int = 0  # streams of the running turn now connected
    expiry: asyncio.TimerHandle | None = None  # stops a turn nobody came back to
    lost: Callable[[], None] | None = None  # called once the handle ended by itself (the host went away)

    def __post_init__(self) -> None:
        self._mapper: EventHandler = SseMapper(self._send, self._newline)
        self._mine = False
        self._complete: ev.Complete | None = None
        history = self.handle.history()
        self.events = EventLog([item_data(item) for item in history])
        self.asked.update(item.approval_id for item in history if isinstance(item, ev.ApprovalRequired))
        self.handle.listen(self._item)
        stream = self.handle.events()  # registered now: its end is the handle's end
        self._watching = asyncio.get_running_loop().create_task(self._watch(stream), name=f"serve-{self.session_id}")

    @property
    def session_id(self) -> str:
        return self.handle.session_id

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def begin(self, chat: ChatRequest) -> None:
        """A turn starts: its events in the shapes the request asked for; seed 002's classification
        (its task types, by rule) first."""
        category = seed_task_type(chat.messages[-1].content)
        if chat.events == "seed":
            self._mapper = SeedMapper(self._send)
            return
        self._mapper = SseMapper(self._send, self._newline, category)
        self._send({"type": "classification", "task_type": category})

    async def turn(self, text: str) -> ev.Complete:
        """One turn through the handle; its Complete event (TurnFailed: the handle's refusal)."""
        self._complete = None
        try:
            reply = await self.handle.submit(Prompt(text))
        finally:
            self._mine = False
        if not reply.ok:
            raise TurnFailed(reply.error or "the turn was refused")
        if reply.data.get("error"):
            raise TurnFailed(str(reply.data["error"]))
        return self._complete or ev.Complete(success=bool(reply.data.get("success")), iterations=0,
                                             final_response="",
                                             completion_reason=reply.data.get("completion_reason") or "error")

    async def stop(self) -> Reply:
        return await self.handle.submit(Stop())

    def _newline(self, path: str) -> str:
        """The line end of a file the session wrote in its folder ("\n" for the editor's buffers)."""
        try:
            data = (self.root / path).read_bytes()[:65536] if self.root is not None else b""
        except OSError:
            return "\n"
        return "\r\n" if data.count(b"\r\n") * 2 > data.count(b"\n") else "\n"

    def _item(self, item: Item) -> None:
        if isinstance(item, Note):
            if item.type == "turn_started":
                self._mine = self.running and item.data.get("by") == self.handle.name
            return
        if isinstance(item, ev.ApprovalRequired):
            self.asked.add(item.approval_id)
        self.events.add(item)
        if not self._mine:
            return  # another front end's turn: followed only
        if isinstance(item, ev.ApprovalRequired):
            self.pending[item.approval_id] = approval_data(item)
        elif isinstance(item, ev.ApprovalResolved):
            self.pending.pop(item.approval_id, None)
        elif isinstance(item, ev.Complete):
            self._complete = item
        self._mapper.handle(item)  # type: ignore[arg-type]  # an event: the Notes returned above

    def _send(self, data: Data) -> None:
        if self.listener is not None:
            self.listener(data)

    async def _watch(self, stream: AsyncIterator[Item]) -> None:
        async for _item in stream:
            pass
        if self.lost is not None:
            self.lost()

    async def close(self) -> None:
        self._watching.cancel()
        self.events.close()
        await self.handle.close(detach=True)

    def summary(self) -> Data:
        return {"session_id": self.session_id, "running": self.running,
                "apply": self.apply, "mode": self.handle.mode, "workspace": self.label,
                "created": self.created, "prompt": self.prompt[:200],
                "pending_approvals": list(self.pending.values())}


async def events_stream(request: web.Request, live: Live) -> web.StreamResponse:
    """A live session's events as SSE: its log so far, replay_end, then each event."""
    replay, queue = live.events.follow()
    end = {"type": "replay_end", "session_id": live.session_id, "running": live.running,
           "pending": list(live.pending)}
    try:
        return await _stream(request, live.session_id, replay, end, queue)
    finally:
        live.events.leave(queue)


async def follow_in_host(request: web.Request, session_id: str, label: str) -> web.StreamResponse | None:
    """A session of this server's folder live in the session host that serve did not open: followed
    through a handle of its own (the host's replay, then its lines); None when there is none."""
    from agent.client.connect import join_in_host
    from agent.client.hosted import HostRefused, HostUnavailable

    try:
        handle = await join_in_host(session_id, "serve follower", live_only=True, start=False)
    except (HostUnavailable, HostRefused, ConnectionError, TimeoutError):
        return None
    queue: asyncio.Queue[Data | None] = asyncio.Queue()
    handle.listen(lambda item: queue.put_nowait(item_data(item)))  # from now on: after the replay
    ended = asyncio.ensure_future(handle.lost.wait())
    ended.add_done_callback(lambda _done: queue.put_nowait(None))
    try:
        if handle.workspace_label != label:  # another folder's session is not this server's to show
            return None
        replay = [item_data(item) for item in handle.history()]
        return await _stream(request, handle.session_id, replay, dict(handle.state), queue)
    finally:
        ended.cancel()
        await handle.close(detach=True)


async def _stream(request: web.Request, session_id: str, replay: list[Data], end: Data,
                  queue: asyncio.Queue[Data | None]) -> web.StreamResponse:
    from agent.frontends.serve.app import SESSION_HEADER, frame

    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           "X-Accel-Buffering": "no", SESSION_HEADER: session_id})
    try:
        await response.prepare(request)
        await response.write(b"".join(frame(data) for data in replay) + frame(end))
        while True:
            try:
                data = await asyncio.wait_for(queue.get(), KEEPALIVE)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            await response.write(frame(data if data is not None else {"type": "session_closed"}))
            if data is None:
                break
        await response.write_eof()
    except ConnectionError:
        pass  # the follower left; the session goes on
    return response
