"""`GET /api/sessions/{id}/events`: a live session's events as SSE, in the shapes of `run --json`.

A follower first receives the session so far (every event since serve opened the session; the
recorded ones of a resumed session; streamed text joined), then `{"type": "replay_end",
"pending": [...], "running": ...}`, then each event as it happens, for as long as it stays
connected or the session lives (`{"type": "session_closed"}` ends the stream). Following does not
drive the session: a turn still belongs to the request that started it.

A session of this server's folder that is live in the session host (agent/host) is followed there
the same way: the host's replay, then its live lines (the host's own lines, `turn_started`,
`approval_answered`..., among them).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from agent import events as ev
from agent.secrets import redact

Data = dict[str, Any]
KEEPALIVE = 15.0


class EventLog:
    """A session's events so far and the queues of those who follow it."""

    def __init__(self, recorded: list[Data] | None = None) -> None:
        self.log: list[Data] = list(recorded or [])
        self.followers: set[asyncio.Queue[Data | None]] = set()

    def add(self, event: Any) -> None:
        data = json.loads(redact(event.model_dump_json()))
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


async def events_stream(request: web.Request, live: Any) -> web.StreamResponse:
    from agent.frontends.serve.app import SESSION_HEADER, frame

    log: EventLog = live.events
    replay, queue = log.follow()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           "X-Accel-Buffering": "no", SESSION_HEADER: live.session.session_id})
    try:
        await response.prepare(request)
        await response.write(b"".join(frame(data) for data in replay) + frame(
            {"type": "replay_end", "session_id": live.session.session_id, "running": live.running,
             "pending": list(live.pending)}))
        while True:
            try:
                data = await asyncio.wait_for(queue.get(), KEEPALIVE)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            if data is None:
                await response.write(frame({"type": "session_closed"}))
                break
            await response.write(frame(data))
        await response.write_eof()
    except ConnectionError:
        pass  # the follower left; the session goes on
    finally:
        log.leave(queue)
    return response


async def follow_host(request: web.Request, session_id: str, label: str) -> web.StreamResponse | None:
    """Follow a session live in the session host, if it is one of `label`'s (None: no such session there)."""
    from agent.client.hosted import HostRefused, HostUnavailable, open_in_host
    from agent.frontends.serve.app import SESSION_HEADER, frame
    from agent.frontends.serve.hosted import item_data

    try:
        handle = await open_in_host(session_id, "serve follower", live_only=True, start=False)
    except (HostUnavailable, HostRefused, ConnectionError, TimeoutError):
        return None
    queue: asyncio.Queue[object] = asyncio.Queue()
    handle.listen(queue.put_nowait)  # from now on: after the replay, nothing missed
    ended = asyncio.ensure_future(handle.lost.wait())
    ended.add_done_callback(lambda _done: queue.put_nowait(None))
    response: web.StreamResponse | None = None
    try:
        if handle.workspace_label != label:  # another folder's session is not this server's to show
            return None
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                               "X-Accel-Buffering": "no", SESSION_HEADER: handle.session_id})
        await response.prepare(request)
        await response.write(b"".join(frame(item_data(item)) for item in handle.history()) + frame(handle.state))
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), KEEPALIVE)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            await response.write(frame(item_data(item) if item is not None else {"type": "session_closed"}))
            if item is None:
                break
        await response.write_eof()
        return response
    except ConnectionError:
        return response  # the follower left; the session goes on in the host
    finally:
        ended.cancel()
        await handle.close(detach=True)
