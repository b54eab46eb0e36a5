"""A protocol-faithful OCT server for tests: aiohttp for the HTTP API, python-socketio for rooms.

HTTP as in collaboration-server.ts: `/api/meta`, login (`initial`, the "Unverified" form provider
at `/api/login/simple`, an optional web provider, long-polled `poll/{token}`, `validate`), and
sessions (`create`, `join/{room}` with host admission through a `peer/join` request, long-polled
`poll/{token}` reporting each status). Tokens are opaque random strings mapped to their claims.

`restart()` plays a server process that dies and comes back on the same port: every connection is
cut without a goodbye, rooms, peers and buffered messages are gone, while login and room tokens
stay valid (the real server signs them with a configured key). The host's reconnect can be held
back (`host_delay`) to play a host whose backoff is slower than a guest's.

Run standalone for manual trials: `python -m tests.oct.server --port 8100`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import socketio
from aiohttp import web

from agent.oct.messages import PROTOCOL_VERSION
from tests.oct.relay import Relay, new_id, plain

log = logging.getLogger(__name__)


@dataclass
class ServerConfig:
    version: str = PROTOCOL_VERSION
    grace: float = 30.0  # how long a disconnected peer is kept
    join_timeout: float = 300.0  # how long the host has to admit a guest
    poll_hold: float = 30.0  # how long a long poll is held before 204
    request_timeout: float = 30.0  # relayed peer-to-peer requests
    form_login: bool = True
    web_login: bool = False


class _Waiter:
    """A result that long polls wait for (login tokens, join outcomes)."""

    def __init__(self) -> None:
        self.result: Any = None
        self.changed = asyncio.Event()

    def update(self, result: Any) -> None:
        self.result = result
        self.changed.set()

    async def wait(self, hold: float) -> Any:
        if self.result is None:
            try:
                await asyncio.wait_for(self.changed.wait(), hold)
            except asyncio.TimeoutError:
                return None
        result = self.result
        self.changed.clear()
        if isinstance(result, dict) and "failure" in result and not result["failure"]:
            self.result = None  # a status is reported once, like the real server
        return result


class OctTestServer:
    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.users: dict[str, dict[str, Any]] = {}  # login token -> user
        self.claims: dict[str, dict[str, Any]] = {}  # room token -> claim
        self.logins: dict[str, _Waiter] = {}
        self.joins: dict[str, _Waiter] = {}
        self.join_requests: list[dict[str, Any]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.restarts = 0
        self.refused_guests = 0  # guest connections ended because their room did not exist (yet)
        self._host_delay = 0.0
        self._build()

    def _build(self) -> None:
        """A fresh process: socket.io server, HTTP app and relay (rooms, peers, buffers)."""
        self.sio = socketio.AsyncServer(
            async_mode="aiohttp", always_connect=True, async_handlers=False, max_http_buffer_size=100_000_000
        )
        self.app = web.Application(middlewares=[self._hold_host])
        self.sio.attach(self.app, socketio_path="socket.io")
        self.relay = Relay(self._send, self._disconnect, self.config.grace, self.config.request_timeout)
        self._locks: dict[str, asyncio.Lock] = {}
        self._routes()
        self.sio.on("connect", self._on_connect)
        self.sio.on("disconnect", self._on_disconnect)
        self.sio.on("message", self._on_message)

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self.runner = web.AppRunner(self.app, handle_signals=False)
        await self.runner.setup()
        site = web.TCPSite(self.runner, host, port)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://{host}:{bound}/"
        return self.url

    async def crash(self) -> None:
        """The process dies: connections are cut (no socket.io goodbye), its state is gone."""
        assert self.runner is not None and self.runner.server is not None
        trace = list(self.relay.trace)
        for handler in list(self.runner.server.connections):
            if handler.transport is not None:
                handler.transport.abort()
        await self.stop()
        self.relay.trace.extend(trace + [f"-- crashed (restart {self.restarts + 1}) --"])

    async def start_again(self, host_delay: float = 0.0) -> None:
        """The process is back on the same port, knowing no room until each host reconnects;
        host_delay holds each host's first reconnect back that long."""
        trace = list(self.relay.trace)
        self._build()
        self.relay.trace.extend(trace)
        self.restarts += 1
        self._host_delay = host_delay
        url = urlsplit(self.url)
        await self.start(url.hostname or "127.0.0.1", url.port or 0)

    async def restart(self, down_for: float = 0.5, host_delay: float = 0.0) -> None:
        await self.crash()
        await asyncio.sleep(down_for)
        await self.start_again(host_delay)

    async def stop(self) -> None:
        for task in [p.close_task for p in self.relay.by_jwt.values() if p.close_task]:
            task.cancel()
        if self.runner:
            await self.runner.cleanup()

    @web.middleware
    async def _hold_host(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """A host's first socket handshake after a restart waits `host_delay` (a host whose
        reconnect backoff is longer than the guest's); nothing is open yet, so nothing is lost."""
        if self._host_delay and request.path.startswith("/socket.io") and "sid" not in request.query:
            claim = self.claims.get(request.headers.get("x-oct-jwt", ""))
            if claim and claim.get("host"):
                delay, self._host_delay = self._host_delay, 0.0
                await asyncio.sleep(delay)
        return await handler(request)

    # -- socket.io ------------------------------------------------------------------------
    def _lock(self, sid: str) -> asyncio.Lock:
        """python-socketio writes a binary event as two frames with an await in between; the
        real (Node) server writes synchronously, so sends to one socket must not interleave."""
        return self._locks.setdefault(sid, asyncio.Lock())

    async def _send(self, sid: str, data: bytes) -> None:
        async with self._lock(sid):
            await self.sio.send(data, to=sid)

    async def _disconnect(self, sid: str) -> None:
        async with self._lock(sid):
            await self.sio.disconnect(sid)

    async def _on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        jwt = environ.get("HTTP_X_OCT_JWT", "")
        public_key = environ.get("HTTP_X_OCT_PUBLIC_KEY", "")
        claim = self.claims.get(jwt)
        if claim is None or not public_key:
            await self.sio.disconnect(sid)
            return
        compression = [c for c in environ.get("HTTP_X_OCT_COMPRESSION", "none").split(",") if c] or ["none"]
        client = environ.get("HTTP_X_OCT_CLIENT", "unknown")
        if not claim.get("host") and claim["room"] not in self.relay.rooms:
            self.refused_guests += 1
        await self.relay.connect(sid, jwt, claim, public_key, compression, client)

    async def _on_disconnect(self, sid: str, *_: Any) -> None:
        self.relay.disconnected(sid)
        self._locks.pop(sid, None)

    async def _on_message(self, sid: str, data: Any) -> None:
        if isinstance(data, bytes):
            await self.relay.receive(sid, data)

    # -- HTTP -----------------------------------------------------------------------------
    def _routes(self) -> None:
        r = self.app.router
        r.add_get("/api/meta", self._meta)
        r.add_post("/api/login/initial", self._login_initial)
        r.add_post("/api/login/simple", self._login_simple)
        r.add_post("/api/login/web-confirm", self._login_web_confirm)
        r.add_get("/login.html", self._login_page)
        r.add_post("/api/login/poll/{token}", self._login_poll)
        r.add_post("/api/login/validate", self._validate)
        r.add_post("/api/session/create", self._create)
        r.add_post("/api/session/join/{room}", self._join)
        r.add_post("/api/session/poll/{token}", self._join_poll)

    async def _meta(self, request: web.Request) -> web.Response:
        return web.json_response({"owner": "test", "version": self.config.version, "transports": ["socket.io"]})

    def _providers(self) -> list[dict[str, Any]]:
        label = lambda text: {"code": text, "params": [], "message": text}  # noqa: E731
        providers = []
        if self.config.form_login:
            providers.append({
                "type": "form", "name": "unverified", "endpoint": "/api/login/simple",
                "label": label("Unverified"), "group": label("Builtins"),
                "fields": [{"name": "user", "required": True, "label": label("Username")},
                           {"name": "email", "required": False, "label": label("Email")}],
            })
        if self.config.web_login:
            providers.append({"type": "web", "name": "testweb", "endpoint": "/api/login/web-confirm",
                              "label": label("Test Web"), "group": label("Third party")})
        return providers

    async def _login_initial(self, request: web.Request) -> web.Response:
        token = new_id()
        self.logins[token] = _Waiter()
        auth = {"loginPageUrl": f"/login.html?token={token}", "providers": self._providers(), "defaultSuccessUrl": ""}
        return web.json_response({"pollToken": token, "auth": auth})

    def _confirm(self, token: str, name: str, email: str | None, provider: str) -> bool:
        waiter = self.logins.get(token)
        if waiter is None or not name:
            return False
        login_token = new_id()
        self.users[login_token] = {"id": new_id(), "name": name, "email": email, "authProvider": provider}
        waiter.update(login_token)
        return True

    async def _login_simple(self, request: web.Request) -> web.Response:
        body = await request.json()
        if not self.config.form_login or not self._confirm(body.get("token", ""), body.get("user", ""), body.get("email"), "Unverified"):
            return web.Response(status=400, text="Failed to perform simple login")
        return web.Response(text="Ok")

    async def _login_page(self, request: web.Request) -> web.Response:
        return web.Response(text=f"<html>login for {request.query.get('token', '')}</html>", content_type="text/html")

    async def _login_web_confirm(self, request: web.Request) -> web.Response:
        """What an OAuth callback does once the user logged in in the browser."""
        body = await request.json()
        ok = self.config.web_login and self._confirm(body.get("token", ""), body.get("name", ""), body.get("email"), "testweb")
        return web.Response(status=200 if ok else 400, text="Ok" if ok else "Failed")

    async def _login_poll(self, request: web.Request) -> web.Response:
        waiter = self.logins.get(request.match_info["token"])
        if waiter is None:
            return web.json_response({"code": "AuthTimeout", "params": [], "message": "Authentication timed out"}, status=400)
        token = await waiter.wait(self.config.poll_hold)
        if token is None:
            return web.Response(status=204)
        self.logins.pop(request.match_info["token"], None)
        return web.json_response({"loginToken": token})

    def _user(self, request: web.Request) -> dict[str, Any] | None:
        return self.users.get(request.headers.get("x-oct-jwt", ""))

    async def _validate(self, request: web.Request) -> web.Response:
        return web.json_response({"valid": self._user(request) is not None})

    async def _create(self, request: web.Request) -> web.Response:
        user = self._user(request)
        if user is None:
            return web.Response(status=403, text="Forbidden resource")
        room_id, token = new_id(), new_id()
        self.claims[token] = {"room": room_id, "user": user, "host": True, "roomClock": 0}
        return web.json_response({"roomId": room_id, "roomToken": token})

    async def _join(self, request: web.Request) -> web.Response:
        user = self._user(request)
        if user is None:
            return web.Response(status=403, text="Forbidden resource")
        room = self.relay.rooms.get(request.match_info["room"])
        if room is None or room.host is None:
            return web.json_response({"code": "RoomNotFound", "params": [], "message": "Room not found"}, status=404)
        poll_token = new_id()
        waiter = self.joins[poll_token] = _Waiter()
        waiter.update({"failure": False, "code": "WaitingForHost", "params": [],
                       "message": "Waiting for host to accept join request"})
        asyncio.create_task(self._admit(room, user, waiter))
        return web.json_response({"pollToken": poll_token, "roomId": room.id})

    async def _admit(self, room: Any, user: dict[str, Any], waiter: _Waiter) -> None:
        public_user = {k: v for k, v in user.items() if k != "id" and v is not None}
        self.join_requests.append(public_user)
        request = plain("request", "peer/join", [public_user], target=room.host.id)
        try:
            response = await self.relay.request(room.host, request, self.config.join_timeout)
        except asyncio.TimeoutError:
            waiter.update({"failure": True, "code": "JoinTimeout", "params": [], "message": "Join request has timed out"})
            return
        content = response.get("content")
        answer = content.get("response") if isinstance(content, dict) else None
        if response.get("kind") != "response" or not isinstance(answer, dict):
            waiter.update({"failure": True, "code": "JoinRejected", "params": [], "message": "Join request has been rejected"})
            return
        room.clock += 1
        token = new_id()
        self.claims[token] = {"room": room.id, "user": user, "roomClock": room.clock}
        waiter.update({"roomId": room.id, "roomToken": token, "workspace": answer.get("workspace", {}),
                       "host": room.host.to_protocol()})

    async def _join_poll(self, request: web.Request) -> web.Response:
        waiter = self.joins.get(request.match_info["token"])
        if waiter is None:
            return web.json_response({"code": "JoinRequestNotFound", "params": [],
                                      "message": "Join request not found or requested timed out"}, status=404)
        result = await waiter.wait(self.config.poll_hold)
        if result is None:
            return web.Response(status=204)
        return web.json_response(result)


async def _main() -> None:
    parser = argparse.ArgumentParser(description="OCT test server")
    parser.add_argument("--port", type=int, default=8100)
    args = parser.parse_args()
    server = OctTestServer()
    print(f"OCT test server at {await server.start(port=args.port)}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    asyncio.run(_main())
