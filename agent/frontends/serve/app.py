"""`coder-tui serve`: the agent behind an HTTP server that streams seed 002's SSE events.

Routes (every one but `/api/health` needs `Authorization: Bearer TOKEN`):
    POST /api/chat              a turn: seed 002's body, answered as text/event-stream
                                (or one JSON object with `"stream": false`); `?events=seed`
                                gives seed 003's event shapes (agent/frontends/seedevents.py)
    POST /api/approvals/{id}    answer an `approval_required` event (ask mode)
    POST /api/sessions/{id}/plan  answer a `plan_decision_required` event (structured workflow, ask mode)
    GET  /api/sessions          the live sessions, whether they run, their pending approvals
    GET  /api/sessions/{id}/events  follow a live session: its events so far, then as they happen
                                (SSE, in `run --json` shapes; see driver.py)
    GET  /api/health            {"status": "ok"} (no token needed)
    GET  /ws, /ws/{token}       the same sessions over a WebSocket (agent/frontends/serve/ws.py)
    GET  /view                  the browser view: follow a session, answer its approvals (no token to
                                load the page; it sends the token itself; agent/frontends/serve/view.py)
A client (address) starts at most `rate_limit` turns a minute; more get 429 with Retry-After.
Every frame of a streamed turn carries `id: N`; a streaming client that disconnects leaves its run
going for the grace period and continues it by re-sending its request with `Last-Event-ID: N`
(agent/frontends/serve/resume.py); nobody back in time, the run is stopped. A `"stream": false` turn
whose client disconnects is stopped and awaited before its handler returns; edits are written
whole (atomically) or not at all.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from agent import __version__
from agent.approval import Decision
from agent.frontends.serve.driver import failure
from agent.frontends.serve.guard import guard
from agent.frontends.serve.limits import RATE_LIMIT, turn_limit
from agent.frontends.serve.request import ApprovalAnswer, BadRequest, ChatRequest, parse
from agent.frontends.serve.resume import Frame, TurnFrames, last_event_id
from agent.frontends.serve.sessions import Busy, Live, NotFound, Sessions, Unavailable
from agent.frontends.serve.view import PUBLIC as VIEW_PATHS
from agent.frontends.serve.view import add_routes as add_view_routes
from agent.planning.review import PlanDecision
from agent.textsafe import json_line

MAX_BODY = 8 * 1024 * 1024
SESSION_HEADER = "X-Session-Id"
KEEPALIVE = 15.0  # seconds of silence before a `: keep-alive` comment line
SESSIONS = web.AppKey("sessions", Sessions)
BODY_LIMIT = web.AppKey("body_limit", int)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def build_app(sessions: Sessions, token: str, max_body: int = MAX_BODY, check_host: bool = True,
              rate_limit: int = RATE_LIMIT) -> web.Application:
    """The application; run it with `handler_cancellation=True` so a disconnect stops its run."""
    app = web.Application(middlewares=[_errors, guard(check_host), _auth(token), turn_limit(rate_limit)],
                          client_max_size=max_body)
    app[SESSIONS] = sessions
    app[BODY_LIMIT] = max_body
    app.router.add_post("/api/chat", _chat)
    app.router.add_post("/api/approvals/{id}", _approve)
    app.router.add_get("/api/sessions", _sessions)
    app.router.add_post("/api/sessions/{id}/plan", _plan)
    app.router.add_get("/api/sessions/{id}/events", _follow)
    app.router.add_get("/api/health", _health)
    app.router.add_get("/ws", _websocket)
    app.router.add_get("/ws/{token}", _websocket)
    add_view_routes(app)

    async def close_sessions(_app: web.Application) -> None:
        await sessions.close()

    app.on_shutdown.append(close_sessions)
    return app


def error_response(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every refusal is a JSON `{"error": ...}` with its status."""
    try:
        return await handler(request)
    except BadRequest as exc:
        return error_response(400, str(exc))
    except NotFound as exc:
        return error_response(404, str(exc))
    except Busy as exc:
        return error_response(409, str(exc))
    except Unavailable as exc:
        return error_response(503, str(exc))
    except web.HTTPRequestEntityTooLarge:
        return error_response(413, f"the request body is larger than {request.app[BODY_LIMIT]:,} bytes")
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return error_response(exc.status, exc.reason)


def _auth(token: str) -> Middleware:
    expected = f"Bearer {token}".encode()

    @web.middleware
    async def auth(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != "/api/health" and request.path not in VIEW_PATHS:
            given = request.headers.get("Authorization", "").encode()
            if not given and request.path.startswith("/ws/"):  # seed 003's /ws/{token}: browsers set no headers
                given = f"Bearer {request.path.removeprefix('/ws/')}".encode()
            if not hmac.compare_digest(given, expected):
                response = error_response(401, "missing or wrong token: send Authorization: Bearer TOKEN "
                                               "(the token `coder-tui serve` printed)")
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
        return await handler(request)

    return auth


async def _body(request: web.Request) -> bytes:
    limit = request.app[BODY_LIMIT]
    if request.content_length is not None and request.content_length > limit:
        raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=request.content_length)
    return await request.read()


async def _chat(request: web.Request) -> web.StreamResponse:
    chat: ChatRequest = parse(ChatRequest, await _body(request))
    shape = request.query.get("events")
    if shape is not None:
        if shape not in ("ours", "seed"):
            raise BadRequest(f"events={shape!r}: give `ours` (the default) or `seed` (seed 003's shapes)")
        chat = chat.model_copy(update={"events": shape})
    sessions = request.app[SESSIONS]
    last_id = _last_id(request)
    if last_id is not None:
        if not chat.stream:
            raise BadRequest("Last-Event-ID continues a streamed turn; it cannot be combined with \"stream\": false")
        live = sessions.resume(chat.session_id or request.headers.get(SESSION_HEADER), last_id)
        if live.frames.ended and last_id == live.frames.next_id - 1:
            return web.Response(status=204)  # nothing missed: an EventSource stops reconnecting
        return await _stream(request, sessions, live, chat, last_id)
    live = await sessions.open(chat, chat.session_id or request.headers.get(SESSION_HEADER))
    await sessions.configure(live, chat.mode, chat.agent_id)
    if chat.stream:
        return await _stream(request, sessions, live, chat)
    return await _collect(sessions, live, chat)


def _last_id(request: web.Request) -> int | None:
    header = request.headers.get("Last-Event-ID")
    try:
        return last_event_id(header)
    except ValueError:
        raise BadRequest(f"Last-Event-ID {header!r}: give the id (a number) of the last event received") from None


def frame(data: dict[str, Any], event_id: int | None = None) -> bytes:
    # U+2028/9, C1 and bidi characters as \u escapes: the same data, inert in a terminal or a JS reader
    head = b"" if event_id is None else b"id: %d\n" % event_id
    return head + b"data: " + json_line(json.dumps(data, ensure_ascii=False)).encode() + b"\n\n"


async def _stream(request: web.Request, sessions: Sessions, live: Live, chat: ChatRequest,
                  last_id: int | None = None) -> web.StreamResponse:
    """The turn's frames after `last_id` (a new turn, started here, when None), then the rest as they come."""
    if last_id is None:
        # started before the first await, so that no second request can take the session meanwhile
        _start_streamed(sessions, live, chat)
        last_id = live.frames.first_id - 1
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           "X-Accel-Buffering": "no", SESSION_HEADER: live.session_id})
    sessions.attach(live)
    try:
        await response.prepare(request)
        await _pump(response, live.frames, last_id)
        await response.write_eof()
    except ConnectionError:  # the client left: the run goes on for the grace period (`detach`)
        pass
    finally:
        sessions.detach(live)
    return response


def _start_streamed(sessions: Sessions, live: Live, chat: ChatRequest) -> None:
    frames = live.frames
    frames.begin()
    frames.add({"type": "session", "session_id": live.session_id})
    task = sessions.start(live, chat, frames.add)

    def ended(_task: asyncio.Task[Any]) -> None:
        if live.task is not task:
            return
        failure = _failure(task)
        if failure:
            frames.add({"error": failure})
        frames.add({"done": True})
        frames.end()
        live.listener = None

    task.add_done_callback(ended)


async def _pump(response: web.StreamResponse, frames: TurnFrames, last_id: int) -> None:
    """Write the turn's frames as they come (what is queued meanwhile goes in one write) until its end;
    a comment line while nothing comes (an approval waits) keeps proxies from closing the stream."""
    while True:
        batch: list[Frame] | None = await frames.after(last_id, KEEPALIVE)
        if batch is None:
            return
        if not batch:
            await response.write(b": keep-alive\n\n")
            continue
        await response.write(b"".join(frame(data, event_id) for event_id, data in batch))
        last_id = batch[-1][0]


async def _collect(sessions: Sessions, live: Live, chat: ChatRequest) -> web.Response:
    """`"stream": false`: the turn's text, diffs and errors in one JSON object."""
    result: dict[str, Any] = {"session_id": live.session_id, "content": "", "diffs": [], "errors": []}

    def listen(data: dict[str, Any]) -> None:
        if "content" in data:
            result["content"] += data["content"]
        elif data.get("type") == "diff":
            result["diffs"].append(data)
        elif data.get("error"):
            result["errors"].append(data["error"])
        elif data.get("type") == "classification":
            result["task_type"] = data["task_type"]
            if data.get("intent"):
                result["intent"] = data["intent"]
        elif data.get("type") == "published":
            result["published"] = data
        elif data.get("type") == "complete":
            result.update(success=data["success"], completion_reason=data["completion_reason"])

    task = sessions.start(live, chat, listen)
    try:
        await asyncio.wait({task})
    finally:
        await sessions.finish(live)
    failure = _failure(task)
    if failure:
        result["errors"].append(failure)
    return web.json_response(result, headers={SESSION_HEADER: live.session_id})


def _failure(task: asyncio.Task[Any]) -> str | None:
    """What went wrong when a turn ended with an exception (the loop reports its own errors as events)."""
    exc = None if task.cancelled() else task.exception()
    return None if exc is None else failure(exc)


async def _approve(request: web.Request) -> web.Response:
    answer: ApprovalAnswer = parse(ApprovalAnswer, await _body(request))
    approval_id = request.match_info["id"]
    session_id = await request.app[SESSIONS].answer_first(approval_id, Decision(answer.decision, answer.feedback))
    return web.json_response({"id": approval_id, "decision": answer.decision, "session_id": session_id})


async def _plan(request: web.Request) -> web.Response:
    decision: PlanDecision = parse(PlanDecision, await _body(request))
    await request.app[SESSIONS].decide_plan(request.match_info["id"], decision)
    return web.json_response({"session_id": request.match_info["id"], "decision": decision.decision})


async def _sessions(request: web.Request) -> web.Response:
    return web.json_response({"sessions": await request.app[SESSIONS].listing()})


async def _websocket(request: web.Request) -> web.StreamResponse:
    from agent.frontends.serve.ws import websocket

    return await websocket(request, request.app[SESSIONS], request.app[BODY_LIMIT])


async def _follow(request: web.Request) -> web.StreamResponse:
    from agent.frontends.serve.driver import events_stream, follow_in_host

    sessions = request.app[SESSIONS]
    try:
        live = sessions.find(request.match_info["id"])
    except NotFound:  # perhaps live in the session host
        response = await follow_in_host(request, request.match_info["id"], sessions.opener.label)
        if response is None:
            raise
        return response
    return await events_stream(request, live)


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok", "version": __version__})
