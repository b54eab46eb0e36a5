"""Rooms, peers and message relaying of the OCT test server, as open-collaboration-server does it.

Rules kept from the real server (packages/open-collaboration-server/src): the server overwrites
`origin` with the sender's peer id; peer-to-peer requests, notifications and broadcasts must be
encrypted or they are dropped; a broadcast reaches each other peer with only its own key entry;
relayed requests get a server-side id and the answer goes back under the original id; messages
with an incompatible protocol version are ignored; a peer whose socket closes is kept for a grace
period (30 s) with its messages buffered, so a reconnect with the same room token loses nothing;
a host that leaves closes the room.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import string
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.oct import codec
from agent.oct.messages import PROTOCOL_VERSION, compatible_versions

log = logging.getLogger(__name__)

Sender = Callable[[str, bytes], Awaitable[None]]  # (socket id, data)
Closer = Callable[[str], Awaitable[None]]  # disconnect a socket id


_ALPHANUMERIC = string.digits + string.ascii_uppercase + string.ascii_lowercase


def new_id(length: int = 24) -> str:
    """Like the real server's generateSecureId (room ids, tokens): alphanumeric."""
    return "".join(secrets.choice(_ALPHANUMERIC) for _ in range(length))


def plain(kind: str, method: str, params: list[Any], origin: str = "", target: str | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "version": PROTOCOL_VERSION,
        "kind": kind,
        "metadata": {"encryption": {"keys": []}, "compression": {"algorithm": "none"}},
        "origin": origin,
        "content": {"method": method, "params": params},
        **extra,
    }
    if target is not None:
        message["target"] = target
    return message


@dataclass(eq=False)
class ServerPeer:
    id: str
    jwt: str
    user: dict[str, Any]
    host: bool
    public_key: str
    compression: list[str]
    client: str
    room: Room
    sid: str | None = None
    buffer: list[bytes] = field(default_factory=list)
    close_task: asyncio.Task[None] | None = None
    disposed: bool = False

    def to_protocol(self) -> dict[str, Any]:
        peer: dict[str, Any] = {
            "id": self.id,
            "host": self.host,
            "name": self.user.get("name", ""),
            "metadata": {
                "compression": {"supported": self.compression},
                "encryption": {"publicKey": self.public_key},
            },
        }
        if self.user.get("email"):
            peer["email"] = self.user["email"]
        return peer


@dataclass(eq=False)
class Room:
    id: str
    host: ServerPeer | None = None
    guests: list[ServerPeer] = field(default_factory=list)
    clock: int = 0
    closed: bool = False

    @property
    def peers(self) -> list[ServerPeer]:
        return ([self.host] if self.host else []) + self.guests

    def get(self, peer_id: str | None) -> ServerPeer | None:
        return next((p for p in self.peers if p.id == peer_id), None)


class Relay:
    def __init__(self, send: Sender, close: Closer, grace: float, request_timeout: float) -> None:
        self._send = send
        self._close = close
        self.grace = grace
        self.request_timeout = request_timeout
        self.rooms: dict[str, Room] = {}
        self.by_jwt: dict[str, ServerPeer] = {}
        self.by_sid: dict[str, ServerPeer] = {}
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.dropped: list[str] = []  # why messages were dropped, for tests to inspect
        self.trace: deque[str] = deque(maxlen=300)  # connections and deliveries, printed when a test fails

    def _note(self, what: str) -> None:
        self.trace.append(f"{time.monotonic():.3f} {what}")

    # -- delivery -------------------------------------------------------------------------
    async def deliver(self, peer: ServerPeer, message: dict[str, Any]) -> None:
        data = codec.encode(message)
        content = message.get("content")
        method = content.get("method", "") if isinstance(content, dict) else "(encrypted)"
        self._note(f"deliver {message.get('kind')} {method} id={message.get('id', '')} to {peer.id}"
                   f" {'buffered' if peer.sid is None else 'sid=' + peer.sid}")
        if peer.sid is None:
            peer.buffer.append(data)
        else:
            await self._send(peer.sid, data)

    async def request(self, target: ServerPeer, message: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        key = new_id()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            await self.deliver(target, {**message, "id": key})
            return await asyncio.wait_for(future, timeout or self.request_timeout)
        except asyncio.TimeoutError:
            self._note(f"request id={key} to {target.id} timed out")
            raise
        finally:
            self._pending.pop(key, None)

    # -- connections ----------------------------------------------------------------------
    async def connect(self, sid: str, jwt: str, claim: dict[str, Any], public_key: str, compression: list[str], client: str) -> None:
        existing = self.by_jwt.get(jwt)
        if existing is not None and not existing.disposed:
            await self._reattach(existing, sid)
            return
        room = self.rooms.get(claim["room"])
        if claim.get("host"):
            room = room or Room(claim["room"])
            self.rooms[room.id] = room
        if room is None or room.closed:
            await self._close(sid)
            return
        peer = ServerPeer(new_id(), jwt, claim["user"], bool(claim.get("host")), public_key, compression, client, room, sid)
        self._note(f"connect {'host' if peer.host else 'guest'} {peer.id} sid={sid}")
        self.by_jwt[jwt], self.by_sid[sid] = peer, peer
        if peer.host:
            room.host = peer
        else:
            room.guests.append(peer)
            await self.broadcast_from(peer, plain("broadcast", "room/joined", [peer.to_protocol()]))
        await self.deliver(peer, plain("notification", "peer/info", [peer.to_protocol()], target=peer.id))

    async def _reattach(self, peer: ServerPeer, sid: str) -> None:
        self._note(f"reattach {peer.id} sid={sid} (was {peer.sid}), {len(peer.buffer)} buffered")
        if peer.close_task:
            peer.close_task.cancel()
            peer.close_task = None
        if peer.sid:
            self.by_sid.pop(peer.sid, None)
        peer.sid = sid
        self.by_sid[sid] = peer
        buffered, peer.buffer = peer.buffer, []
        for data in buffered:
            await self._send(sid, data)

    def disconnected(self, sid: str) -> None:
        peer = self.by_sid.pop(sid, None)
        self._note(f"disconnected sid={sid} peer={peer.id if peer else None}")
        if peer is None or peer.disposed or peer.sid != sid:
            return
        peer.sid = None
        peer.close_task = asyncio.create_task(self._expire(peer))

    async def _expire(self, peer: ServerPeer) -> None:
        await asyncio.sleep(self.grace)
        peer.close_task = None
        await self.dispose(peer)

    async def dispose(self, peer: ServerPeer) -> None:
        if peer.disposed:
            return
        peer.disposed = True
        self.by_jwt.pop(peer.jwt, None)
        if peer.close_task:
            peer.close_task.cancel()
        room = peer.room
        if peer.host:
            await self.close_room(room)
        elif peer in room.guests and not room.closed:
            await self.broadcast_from(peer, plain("broadcast", "room/left", [peer.to_protocol()]))
            room.guests.remove(peer)
        if peer.sid:
            sid, peer.sid = peer.sid, None
            self.by_sid.pop(sid, None)
            await self._close(sid)

    async def close_room(self, room: Room) -> None:
        if room.closed:
            return
        room.closed = True
        if room.host:
            await self.broadcast_from(room.host, plain("broadcast", "room/closed", []))
        for peer in list(room.peers):
            await self.dispose(peer)
        self.rooms.pop(room.id, None)

    # -- relaying -------------------------------------------------------------------------
    async def broadcast_from(self, origin: ServerPeer, message: dict[str, Any]) -> None:
        message = {**message, "origin": origin.id}
        keys = message["metadata"]["encryption"]["keys"]
        encrypted = isinstance(message.get("content"), bytes)
        for peer in origin.room.peers:
            if peer is origin:
                continue
            own = [k for k in keys if isinstance(k, dict) and k.get("target") == peer.id]
            if encrypted and own:
                metadata = {**message["metadata"], "encryption": {"keys": own[:1]}}
                await self.deliver(peer, {**message, "metadata": metadata})
            elif not encrypted:
                await self.deliver(peer, message)
            else:
                self.dropped.append(f"no key for {peer.id} in a broadcast from {origin.id}")

    async def receive(self, sid: str, data: bytes) -> None:
        peer = self.by_sid.get(sid)
        if peer is None or peer.disposed:
            return
        try:
            message = codec.decode(data)
        except codec.DecodeError as exc:
            self.dropped.append(f"undecodable message: {exc}")
            return
        if not isinstance(message, dict) or not isinstance(message.get("version"), str):
            self.dropped.append("message without version")
            return
        if not compatible_versions(message["version"]):
            self.dropped.append(f"incompatible version {message['version']}")
            return
        await self._route(peer, message)

    async def _route(self, peer: ServerPeer, message: dict[str, Any]) -> None:
        kind = message.get("kind")
        encrypted = isinstance(message.get("content"), bytes)
        if kind in ("response", "response-error"):
            future = self._pending.get(str(message.get("id")))
            self._note(f"{kind} id={message.get('id')} from {peer.id} awaited={future is not None}")
            if future is not None and not future.done():
                future.set_result(message)
        elif kind == "request":
            if not encrypted:
                self.dropped.append(f"unencrypted request from {peer.id}")
                return
            asyncio.create_task(self._relay_request(peer, {**message, "origin": peer.id}))
        elif kind == "notification":
            message = {**message, "origin": peer.id}
            if message.get("target") == "":
                await self._server_notification(peer, message)
            elif not encrypted:
                self.dropped.append(f"unencrypted notification from {peer.id}")
            elif (target := peer.room.get(message.get("target"))) is not None:
                await self.deliver(target, message)
            else:
                self.dropped.append(f"notification for unknown peer {message.get('target')}")
        elif kind == "broadcast":
            if not encrypted:
                self.dropped.append(f"unencrypted broadcast from {peer.id}")
                return
            await self.broadcast_from(peer, message)

    async def _relay_request(self, peer: ServerPeer, message: dict[str, Any]) -> None:
        target = peer.room.get(message.get("target"))
        try:
            if target is None:
                raise LookupError(f"no peer {message.get('target')}")
            response = await self.request(target, message)
            await self.deliver(peer, {**response, "id": message["id"]})
        except (LookupError, asyncio.TimeoutError):
            error = {
                "version": PROTOCOL_VERSION,
                "kind": "response-error",
                "id": message["id"],
                "metadata": {"encryption": {"keys": []}, "compression": {"algorithm": "none"}},
                "content": {"message": "Failed to retrieve the requested data."},
            }
            await self.deliver(peer, error)

    async def _server_notification(self, peer: ServerPeer, message: dict[str, Any]) -> None:
        content = message.get("content")
        if isinstance(content, dict) and content.get("method") == "room/leave":
            await self.dispose(peer)
        else:
            self.dropped.append(f"unknown server notification from {peer.id}")
