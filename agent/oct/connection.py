"""The protocol connection: requests, notifications, broadcasts, encryption and the peer registry.

Incoming bytes are decoded, checked, decrypted and dispatched in arrival order: plain handlers run
inline (so document updates apply in order), coroutine handlers run as tasks (so a slow request
handler never stalls the socket). Anything malformed or undecryptable is logged and skipped.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.oct import codec
from agent.oct.crypto import CryptoError, MessageCrypto, Recipient
from agent.oct.errors import RequestFailed, RequestTimeout
from agent.oct.messages import (
    SERVER,
    Envelope,
    InitData,
    Methods,
    Peer,
    ProtocolError,
    compatible_versions,
    parse_call,
    parse_envelope,
    parse_model,
)

log = logging.getLogger(__name__)

Handler = Callable[..., Any]  # (origin, *params) -> value, or an awaitable of one
REQUEST_TIMEOUT = 60.0


@dataclass
class Stats:
    received: int = 0
    skipped: int = 0
    sent: int = 0


class OctConnection:
    def __init__(self, crypto: MessageCrypto, write: Callable[[bytes], int | None]) -> None:
        self.crypto = crypto
        self._write = write
        self.peers: dict[str, Peer] = {}
        self.self_id: str | None = None
        self.stats = Stats()
        self._handlers: dict[str, Handler] = {}
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._next_id = 1
        self._tasks: set[asyncio.Task[Any]] = set()
        self.on_error: Callable[[str], None] = lambda message: log.warning("peer error: %s", message)

    # -- peers ----------------------------------------------------------------------------
    def add_peer(self, peer: Peer) -> None:
        if peer.id != self.self_id:
            self.peers[peer.id] = peer

    def remove_peer(self, peer_id: str) -> None:
        self.peers.pop(peer_id, None)
        self.crypto.encrypted_keys.pop(peer_id, None)

    def _recipient(self, peer_id: str) -> Recipient:
        peer = self.peers.get(peer_id)
        if peer is None:
            raise RequestFailed(f"no public key known for peer {peer_id}")
        meta = peer.metadata
        return Recipient(peer.id, meta.encryption.publicKey, tuple(meta.compression.supported))

    def _apply_builtin(self, method: str, params: list[Any]) -> None:
        """Keep the registry current (what the JS connection does before user handlers)."""
        if method == Methods.PEER_INFO and params:
            self.self_id = parse_model(Peer, params[0], "peer").id
        elif method == Methods.PEER_INIT and params:
            init = parse_model(InitData, params[0], "init data")
            for peer in [init.host, *init.guests]:
                self.add_peer(peer)
        elif method == Methods.ROOM_JOINED and params:
            self.add_peer(parse_model(Peer, params[0], "peer"))
        elif method == Methods.ROOM_LEFT and params:
            self.remove_peer(parse_model(Peer, params[0], "peer").id)
        elif method == Methods.ROOM_CLOSED:
            self.peers.clear()

    # -- handlers -------------------------------------------------------------------------
    def on(self, method: str, handler: Handler) -> None:
        self._handlers[method] = handler

    def _run(self, handler: Handler, *args: Any) -> Any:
        result = handler(*args)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._tasks.add(task)
            task.add_done_callback(self._task_done)
            return task
        return result

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("handler failed: %r", task.exception())

    # -- receiving ------------------------------------------------------------------------
    async def receive(self, data: bytes) -> None:
        """Handle one message from the transport; never raises for bad input."""
        self.stats.received += 1
        try:
            envelope = self._parse(data)
            if envelope is not None:
                await self._dispatch(envelope)
        except (codec.DecodeError, ProtocolError, CryptoError) as exc:
            self.stats.skipped += 1
            log.warning("skipped a message: %s", exc)
        except Exception:  # a handler bug must not take the connection down
            self.stats.skipped += 1
            log.exception("error while handling a message")

    def _parse(self, data: bytes) -> Envelope | None:
        envelope = parse_envelope(codec.decode(data))
        if not compatible_versions(envelope.version):
            self.stats.skipped += 1
            log.warning("skipped a message with protocol version %r", envelope.version)
            return None
        return envelope

    def _content(self, envelope: Envelope) -> Any:
        if envelope.encrypted:
            return self.crypto.decrypt_content(envelope)
        return envelope.content

    async def _dispatch(self, envelope: Envelope) -> None:
        self.crypto.trim_caches(len(self.peers))
        kind = envelope.kind
        if kind in ("response", "response-error"):
            self._on_response(envelope)
        elif kind == "request":
            self._on_request(envelope)
        elif kind in ("notification", "broadcast"):
            call = parse_call(self._content(envelope))
            self._apply_builtin(call.method, call.params)
            handler = self._handlers.get(call.method)
            if handler is None:
                log.debug("no handler for %s %s", kind, call.method)
                return
            self._run(handler, envelope.origin or SERVER, *call.params)
        elif kind == "error":
            content = self._content(envelope)
            message = content.get("message") if isinstance(content, dict) else None
            self.on_error(str(message or content))

    def _on_response(self, envelope: Envelope) -> None:
        future = self._pending.pop(envelope.id, None) if envelope.id is not None else None
        if future is None or future.done():
            log.debug("response for unknown request %r", envelope.id)
            return
        try:
            content = self._content(envelope)
        except (CryptoError, codec.DecodeError) as exc:
            future.set_exception(RequestFailed(f"unreadable response: {exc}"))
            return
        if not isinstance(content, dict):
            future.set_exception(RequestFailed("malformed response"))
        elif envelope.kind == "response":
            future.set_result(content.get("response"))
        else:
            future.set_exception(RequestFailed(str(content.get("message", "request failed"))))

    def _on_request(self, envelope: Envelope) -> None:
        call = parse_call(self._content(envelope))
        origin = envelope.origin or SERVER
        handler = self._handlers.get(call.method)
        task = asyncio.ensure_future(self._answer(envelope.id, origin, call.method, handler, call.params))
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    async def _answer(
        self, request_id: Any, origin: str, method: str, handler: Handler | None, params: list[Any]
    ) -> None:
        if handler is None:
            error = {"message": f"method {method} is not supported"}
            reply = Envelope("response-error", error, id=request_id)
        else:
            try:
                result = handler(origin, *params)
                if inspect.isawaitable(result):
                    result = await result
                reply = Envelope("response", {"response": result}, id=request_id)
            except Exception as exc:  # the requester reads the error, as with the JS client
                reply = Envelope("response-error", {"message": str(exc)}, id=request_id)
        if origin == SERVER:
            self._send(reply)
        else:
            self._send(self.crypto.encrypt(reply, [self._recipient(origin)]))

    # -- sending --------------------------------------------------------------------------
    def _send(self, envelope: Envelope) -> int:
        """Queue one message; returns the transport's sequence number for it (0: not sent)."""
        self.stats.sent += 1
        return self._write(codec.encode(envelope.to_wire())) or 0

    async def request(self, method: str, target: str, *params: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
        """Send a request and wait for its answer (RequestFailed / RequestTimeout)."""
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        content = {"method": method, "params": list(params)}
        envelope = Envelope("request", content, id=request_id, target=target)
        try:
            if target != SERVER:
                envelope = self.crypto.encrypt(envelope, [self._recipient(target)])
            self._send(envelope)
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise RequestTimeout(f"{method} got no answer within {timeout:.0f} s") from None
        finally:
            self._pending.pop(request_id, None)

    def notify(self, method: str, target: str, *params: Any) -> None:
        """Queue a notification (to the server when target is SERVER, else encrypted)."""
        envelope = Envelope("notification", {"method": method, "params": list(params)}, target=target)
        if target != SERVER:
            envelope = self.crypto.encrypt(envelope, [self._recipient(target)])
        self._send(envelope)

    def broadcast(self, method: str, *params: Any) -> int:
        """Queue a broadcast to every other peer; returns its sequence number (0: nothing sent,
        e.g. while we know no peer)."""
        recipients = [self._recipient(peer_id) for peer_id in list(self.peers)]
        if not recipients:
            return 0
        envelope = Envelope("broadcast", {"method": method, "params": list(params)})
        return self._send(self.crypto.encrypt(envelope, recipients))

    def fail_pending(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RequestFailed(reason))
        self._pending.clear()

    async def close(self) -> None:
        self.fail_pending("the connection was closed")
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
