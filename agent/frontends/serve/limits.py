"""A per-client limit on turns (`POST /api/chat`): over it, 429 with `Retry-After` (seed 002).

A client is its remote address. The window slides: a client may start `per_minute` turns in any
60 seconds; the answer says how many seconds until the oldest of them leaves the window. Other
routes (approvals, the session list, health) are cheap and not counted.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

WINDOW = 60.0
RATE_LIMIT = 30  # turns per client per minute; 0 turns the limit off
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class TurnLimit:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._seen: dict[str, deque[float]] = {}

    def wait(self, client: str) -> int:
        """0 when the client may start a turn now (and it is counted), else the seconds to wait."""
        now = self.clock()
        seen = self._seen.setdefault(client, deque())
        while seen and now - seen[0] >= WINDOW:
            seen.popleft()
        if len(seen) >= self.per_minute:
            return max(1, math.ceil(WINDOW - (now - seen[0])))
        seen.append(now)
        if len(self._seen) > 10_000:  # forget clients whose window is empty
            self._seen = {k: v for k, v in self._seen.items() if v and now - v[-1] < WINDOW}
        return 0


def turn_limit(per_minute: int) -> Middleware:
    limit = TurnLimit(per_minute)

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if per_minute and request.method == "POST" and request.path == "/api/chat" \
                and "Last-Event-ID" not in request.headers:  # a reconnect starts no turn
            wait = limit.wait(request.remote or "")
            if wait:
                return web.json_response(
                    {"error": f"too many requests: at most {per_minute} turns a minute from one client; "
                              f"retry in {wait} s (`coder-tui serve --rate-limit N` changes the limit)"},
                    status=429, headers={"Retry-After": str(wait)})
        return await handler(request)

    return middleware
