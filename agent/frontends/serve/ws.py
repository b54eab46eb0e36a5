"""`GET /ws` on `serve`: the same sessions over one WebSocket, for clients built on seed 003.

The token comes as `Authorization: Bearer TOKEN` or, for browsers that cannot set headers on a
WebSocket, as the path `/ws/TOKEN` (seed 003's shape). Each text frame from the client is one
JSON object:

    {"message": TEXT, "session_id"?, "mode"?|"edit_mode"?, "profile"?, "events"?: "ours"|"seed"}
        a turn; mode and profile apply to the session from this turn on
    {"type": "approval", "approval_id"|"id": ID, "decision": ..., "feedback"?}
        answer an approval_required event
    {"type": "stop"}
        stop the running turn

Every event of a turn is a text frame holding the SSE data object it would be (`?events=seed`:
seed 003's shapes), the first a `{"type": "session", "session_id"}`, the last `{"done": true}`.
A bad frame is answered with `{"error": ...}` and the socket stays open. Closing the socket stops
the running turn, as a disconnecting SSE client does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from aiohttp import WSMsgType, web
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from agent.approval import Decision
from agent.config import first_problem
from agent.events import DecisionKind, Mode
from agent.frontends.serve.driver import failure
from agent.frontends.serve.request import BadRequest, ChatRequest
from agent.frontends.serve.sessions import Busy, Live, NotFound, Sessions, Unavailable

Data = dict[str, Any]


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    message: str = Field(min_length=1)
    session_id: str | None = None
    mode: Mode | None = Field(default=None, validation_alias=AliasChoices("mode", "edit_mode"))
    profile: str | None = Field(default=None, validation_alias=AliasChoices("profile", "agent_id"))
    events: Literal["ours", "seed"] = "ours"


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    approval_id: str = Field(min_length=1)
    decision: DecisionKind
    feedback: str | None = None


class Socket:
    """One client's WebSocket: its turns one at a time, its answers and stops any time."""

    def __init__(self, ws: web.WebSocketResponse, sessions: Sessions) -> None:
        self.ws, self.sessions = ws, sessions
        self.outbox: asyncio.Queue[Data | None] = asyncio.Queue()
        self.live: Live | None = None
        self.turn: asyncio.Task[Any] | None = None

    async def serve(self) -> None:
        writer = asyncio.create_task(self._write())
        try:
            async for frame in self.ws:
                if frame.type != WSMsgType.TEXT:
                    break
                await self._take(frame.data)
        finally:
            try:
                if self.live is not None:
                    await self.sessions.finish(self.live)  # the client left: its turn stops
                if self.turn is not None:
                    await asyncio.wait({self.turn}, timeout=5)
            finally:
                self.outbox.put_nowait(None)
                await asyncio.wait({writer}, timeout=5)
                writer.cancel()

    async def _write(self) -> None:
        while (data := await self.outbox.get()) is not None:
            if self.ws.closed:
                continue
            try:
                await self.ws.send_str(json.dumps(data, ensure_ascii=False))
            except ConnectionError:  # the client went away mid-frame: what is left is dropped
                continue

    def send(self, data: Data) -> None:
        self.outbox.put_nowait(data)

    async def _take(self, text: str) -> None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            self.send({"error": f"a frame must be one JSON object ({exc.msg})"})
            return
        if not isinstance(data, dict):
            self.send({"error": "a frame must be one JSON object"})
            return
        try:
            if data.get("type") == "stop":
                await self._stop()
            elif data.get("type") == "approval":
                await self._answer(data)
            else:
                await self._start(Turn.model_validate(data))
        except ValidationError as exc:
            where, problem = first_problem(exc, "frame")
            self.send({"error": f"{where}: {problem}"})
        except (BadRequest, Busy, NotFound, Unavailable) as exc:
            self.send({"error": str(exc)})

    async def _stop(self) -> None:
        if self.live is None or not self.live.running:
            self.send({"error": "no turn is running"})
            return
        await self.live.stop()

    async def _answer(self, data: Data) -> None:
        answer = Answer.model_validate({**data, "approval_id": data.get("approval_id") or data.get("id")})
        await self.sessions.answer_first(answer.approval_id, Decision(answer.decision, answer.feedback))

    async def _start(self, turn: Turn) -> None:
        if self.turn is not None and not self.turn.done():
            raise Busy("a turn is running on this socket; wait for its done event (or send {\"type\": \"stop\"})")
        chat = ChatRequest.model_validate({"messages": [{"role": "user", "content": turn.message}],
                                           "events": turn.events})
        session_id = turn.session_id or (self.live.session_id if self.live is not None else None)
        live = await self.sessions.open(chat, session_id)
        self.live = live
        await self.sessions.configure(live, turn.mode, turn.profile)  # BadRequest: said, and no turn runs
        self.send({"type": "session", "session_id": live.session_id})
        self.turn = asyncio.create_task(self._run(live, chat))

    async def _run(self, live: Live, chat: ChatRequest) -> None:
        task = self.sessions.start(live, chat, self.send)
        try:
            await asyncio.wait({task})
        finally:
            await self.sessions.finish(live)
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            self.send({"error": failure(exc)})
        self.send({"done": True})


async def websocket(request: web.Request, sessions: Sessions, max_size: int) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=max_size)
    await ws.prepare(request)
    await Socket(ws, sessions).serve()
    return ws
