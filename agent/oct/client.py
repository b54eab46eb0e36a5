"""A guest in a live OCT room: login, admission, connection, documents, presence and files.

`RoomClient.join()` walks the phases a user sees (connecting, logging in, waiting for the host,
joined) and raises an `OctError` with a readable message for each failure. Once joined the client
keeps the status current, follows the host's active document (asking the host to share it with
`editor/open`), resyncs after reconnects and ends cleanly when the room closes or we leave.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent import __version__
from agent.oct.api import JoinStatus, OctApi
from agent.oct.connection import OctConnection
from agent.oct.crypto import KeyPair, MessageCrypto, start_key_pair
from agent.oct.documents import RoomDocuments
from agent.oct.errors import ConnectionLost, OctError, RequestFailed
from agent.oct.login import Identity, LoginPrompt, TokenStore, login
from agent.oct.messages import (
    SERVER,
    FileStat,
    InitData,
    Methods,
    Peer,
    Permissions,
    parse_model,
)
from agent.oct.status import PeerStatus, RoomPhase, RoomStatus, peer_colour
from agent.oct.transport import SocketTransport, TransportState
from agent.secrets import register

log = logging.getLogger(__name__)

DEFAULT_SERVER = "https://api.open-collab.tools/"
INIT_TIMEOUT = 30.0
LEAVE_DELIVERY_WAIT = 5.0
TICK_SECONDS = 1.0


@dataclass
class RoomOptions:
    room_id: str
    server: str = DEFAULT_SERVER
    name: str = "agent"
    email: str | None = None
    token_store: TokenStore = field(default_factory=TokenStore)
    on_web_login: Callable[[LoginPrompt], None] | None = None
    grace: float = 30.0  # how long a dropped connection may take to come back


class RoomClient:
    def __init__(self, options: RoomOptions, key_pair: asyncio.Future[KeyPair] | None = None) -> None:
        self.options = options
        self.status = RoomStatus(server=options.server, room_id=options.room_id, name=options.name)
        self.api = OctApi(options.server)
        self._keys = key_pair
        self.listeners: list[Callable[[str, Any], None]] = []  # (what, detail) for front ends
        self.connection: OctConnection | None = None
        self.docs: RoomDocuments | None = None
        self.transport: SocketTransport | None = None
        self.closed = asyncio.Event()
        self._initialised = asyncio.Event()
        self._tick_task: asyncio.Task[None] | None = None
        self._announced: str | None = None  # the followed document last announced
        self._leaving = False
        self.lost = False  # the session ended because the connection was lost
        self.chat_listeners: list[Callable[[str, str, bool], None]] = []  # (origin, text, direct)

    # -- status ---------------------------------------------------------------------------
    def publish(self, what: str, detail: Any = None) -> None:
        """Tell the front ends' listeners that something changed (what, detail)."""
        for listener in self.listeners:
            try:
                listener(what, detail)
            except Exception:
                log.exception("room listener failed")

    def _phase(self, phase: RoomPhase, message: str) -> None:
        self.status.phase = phase
        self.status.message = message
        self.publish("state", phase)

    # -- joining --------------------------------------------------------------------------
    async def join(self) -> None:
        """Log in, get admitted and connect (OctError with a readable message on failure).

        A join that fails closes the client with that reason (never "left the room")."""
        try:
            await self._join()
        except OctError as exc:
            self._close(f"could not join: {exc.message}")
            raise

    async def _join(self) -> None:
        if self._keys is None:
            self._keys = start_key_pair()
        self._phase("connecting", f"connecting to {self.options.server}")
        await self.api.ensure_compatible()
        self._phase("logging_in", "logging in")
        identity = Identity(self.options.name, self.options.email)
        await login(self.api, identity, self.options.token_store, self._login_message, self._web_login)
        self._phase("waiting_for_host", f"asking to join room {self.options.room_id}")
        result = await self.api.join_room(self.options.room_id, self._join_status)
        self.status.workspace, self.status.folders = result.workspace.name, result.workspace.folders
        self._set_host(result.host)
        self._phase("connecting", "admitted; opening the room connection")
        await self._connect(result.room_token, result.host)

    def _login_message(self, message: str) -> None:
        self.status.message = message
        self.publish("state", self.status.phase)

    def _web_login(self, prompt: LoginPrompt) -> None:
        self.status.login_url = prompt.url
        self.status.message = f"log in with {prompt.provider} at {prompt.url}"
        self.publish("login_url", prompt.url)
        if self.options.on_web_login:
            self.options.on_web_login(prompt)

    def _join_status(self, status: JoinStatus) -> None:
        self._phase("waiting_for_host", status.message)

    async def _connect(self, room_token: str, host: Peer) -> None:
        assert self._keys is not None
        register(room_token)
        keys = await self._keys
        self.transport = SocketTransport(self._on_bytes, self._on_transport, grace=self.options.grace)
        self.connection = OctConnection(MessageCrypto(keys), self.transport.write)
        self.connection.add_peer(host)
        self.docs = RoomDocuments(self.connection)
        self.transport.on_sent = self.docs.sent
        self.docs.on_after_remote(self._check_followed)
        self._register(self.connection, self.docs)
        headers = {
            "x-oct-jwt": room_token,
            "x-oct-public-key": keys.public_key_b64,
            "x-oct-client": f"coder-tui/{__version__}",
            "x-oct-compression": "gzip",
        }
        await self.transport.connect(self.options.server, headers)
        try:
            await asyncio.wait_for(self._initialised.wait(), INIT_TIMEOUT)
        except asyncio.TimeoutError:
            await self.transport.close()
            raise OctError("connected, but the host never sent the room's initial state") from None
        self._tick_task = asyncio.create_task(self._tick())
        self._phase("joined", f"joined room {self.options.room_id}")

    async def _on_bytes(self, data: bytes) -> None:
        if self.connection is not None:
            await self.connection.receive(data)

    def _register(self, connection: OctConnection, docs: RoomDocuments) -> None:
        connection.on(Methods.PEER_INFO, self._on_info)
        connection.on(Methods.PEER_INIT, self._on_init)
        connection.on(Methods.ROOM_JOINED, self._on_joined)
        connection.on(Methods.ROOM_LEFT, self._on_left)
        connection.on(Methods.ROOM_CLOSED, lambda origin, *_: self._close("the host closed the room"))
        connection.on(Methods.ROOM_PERMISSIONS, self._on_permissions)
        connection.on(Methods.CHAT_MESSAGE, lambda o, text=None, *_: self._on_chat(o, text, False))
        connection.on(Methods.CHAT_DIRECT, lambda o, text=None, *_: self._on_chat(o, text, True))
        connection.on_error = lambda message: log.warning("room error: %s", message)
        docs.on_awareness_change(self._on_awareness)

    # -- protocol handlers ------------------------------------------------------------------
    def _on_info(self, origin: str, peer: Any = None, *_: Any) -> None:
        me = parse_model(Peer, peer, "peer")
        if self.status.peer_id is not None and me.id != self.status.peer_id:
            self._readmitted()
        self.status.peer_id = me.id
        self.status.name = me.name or self.status.name
        if self.docs:
            self.docs.set_identity(me.id)
        self.publish("identity", me.id)

    def _on_init(self, origin: str, data: Any = None, *_: Any) -> None:
        init = parse_model(InitData, data, "init data")
        self._set_host(init.host)
        for guest in init.guests:
            if guest.id != self.status.peer_id:
                self._add_peer(guest)
        self.status.readonly = init.permissions.readonly
        self.status.workspace, self.status.folders = init.workspace.name, init.workspace.folders
        if self.docs:
            self.docs.sync_all()
        self._on_awareness()
        if self._initialised.is_set():  # the host took us back in after a server restart
            self._phase("joined", "back in the room after the server restarted")
        self._initialised.set()

    def _readmitted(self) -> None:
        """The server restarted and took us in again as a new peer: everyone has a new id, and
        what was addressed to the old ones is lost. The host's peer/init brings the room back
        (its sync then delivers our changes made meanwhile)."""
        assert self.connection is not None
        self.connection.peers.clear()
        self.connection.fail_pending("the room's server restarted before the answer came; ask again")
        self.status.peers.clear()
        if self.docs:
            self.docs.forget_deliveries()
        self._phase("reconnecting", "the server restarted; waiting for the host to take us back in")

    def _set_host(self, host: Peer) -> None:
        self.status.host = PeerStatus(host.id, host.name, host.email, True, peer_colour(host.id))

    def _add_peer(self, peer: Peer) -> None:
        colour = peer_colour(peer.id)
        self.status.peers[peer.id] = PeerStatus(peer.id, peer.name, peer.email, peer.host, colour)

    def _on_joined(self, origin: str, peer: Any = None, *_: Any) -> None:
        joined = parse_model(Peer, peer, "peer")
        self._add_peer(joined)
        self.publish("peer_joined", self.status.peers[joined.id])

    def _on_left(self, origin: str, peer: Any = None, *_: Any) -> None:
        left = parse_model(Peer, peer, "peer")
        gone = self.status.peers.pop(left.id, None)
        if self.docs:
            self.docs.forget_peer(left.id)
        if gone is not None:
            self.publish("peer_left", gone)
        if self.status.host and left.id == self.status.host.id:
            self._close("the host left the room")

    def _on_permissions(self, origin: str, permissions: Any = None, *_: Any) -> None:
        self.status.readonly = parse_model(Permissions, permissions, "permissions").readonly
        self.publish("permissions", self.status.readonly)

    def _on_chat(self, origin: str, text: Any, direct: bool) -> None:
        if isinstance(text, str):
            for listener in self.chat_listeners:
                listener(origin, text, direct)

    def _on_awareness(self) -> None:
        if self.docs is None:
            return
        states = self.docs.peer_states()
        for peer in self.status.everyone():
            selection = (states.get(peer.id) or {}).get("selection")
            peer.path = selection.get("path") if isinstance(selection, dict) else None
        host = self.status.host
        if host and host.path and host.path != self.status.followed:
            self.follow(host.path)
        self.publish("awareness", None)

    def follow(self, path: str) -> None:
        """Make path the followed document and ask the host to share it."""
        self.status.followed = path
        self.open_document(path)
        self._check_followed()

    def _check_followed(self) -> None:
        """Announce the followed document once its text has arrived."""
        path = self.status.followed
        if path and path != self._announced and self.docs is not None and self.docs.read(path):
            self._announced = path
            self.publish("followed", path)

    def open_document(self, path: str) -> None:
        if self.connection and self.status.host:
            try:
                self.connection.notify(Methods.EDITOR_OPEN, self.status.host.id, path)
            except RequestFailed as exc:
                log.warning("cannot ask the host to open %s: %s", path, exc)

    # -- connection state -----------------------------------------------------------------
    def _on_transport(self, state: TransportState) -> None:
        if self._leaving or self.closed.is_set():
            return  # the server drops our socket once we left or the room closed: not a loss
        if state in ("reconnecting", "refused"):
            message = ("the server does not know the room (it may have restarted); trying again until the host "
                       "is back" if state == "refused" else "connection lost; reconnecting")
            if (self.status.phase, self.status.message) != ("reconnecting", message):
                self._phase("reconnecting", message)
        elif state == "reconnected":
            if self.docs:
                self.docs.sync_all()  # the server replays what it buffered; this covers the rest
        elif state == "settled" and self._initialised.is_set() and self.docs and self.connection:
            if not self.connection.peers:
                return  # taken in as a new peer: the host's peer/init brings the room back
            self.docs.sync_all()  # again, now that it counts: our changes made meanwhile go out
            self._phase("joined", "reconnected")
        elif state in ("lost", "kicked"):
            self.lost = True
            why = "was lost and did not come back" if state == "lost" else "was closed by the server"
            if self.docs and self.docs.delivered < self.docs.version:
                why += "; changes made in coder-tui's copy since it dropped never reached the room"
            self._close(ConnectionLost(f"the connection to the room {why}").message)

    def _close(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self.status.close_reason = reason
        self._phase("closed", reason)
        self.closed.set()
        if self.connection:
            self.connection.fail_pending(reason)

    async def _tick(self) -> None:
        while not self.closed.is_set():
            await asyncio.sleep(TICK_SECONDS)
            if self.docs and self.transport and self.transport.connected:
                self.docs.tick()

    async def leave(self) -> None:
        """Leave the room (room/leave), then close the connection and the HTTP client."""
        self._leaving = True
        if self._tick_task:
            self._tick_task.cancel()
        if self.connection and self.transport and not self.closed.is_set():
            if self.docs:
                await self._deliver_before_leaving(self.docs)
                self.docs.leave()
            self.connection.notify(Methods.ROOM_LEAVE, SERVER)
            await self.transport.drain()
        self._close("left the room")
        if self.transport:
            await self.transport.close()
        if self.connection:
            await self.connection.close()
        await self.api.close()

    async def _deliver_before_leaving(self, docs: RoomDocuments) -> None:
        """Our last changes (an edit's, say) go out before we leave, if they can soon."""
        try:
            await asyncio.wait_for(docs.until_delivered(docs.version), LEAVE_DELIVERY_WAIT)
        except asyncio.TimeoutError:
            log.warning("leaving with changes the room has not received (the connection is down)")

    # -- the host's files -----------------------------------------------------------------
    async def _ask_host(self, method: str, *params: Any) -> Any:
        if self.connection is None or self.status.host is None or self.closed.is_set():
            raise OctError("not connected to the room")
        return await self.connection.request(method, self.status.host.id, *params)

    async def stat(self, path: str) -> FileStat:
        return parse_model(FileStat, await self._ask_host(Methods.FS_STAT, path), "file stat")

    async def read_file(self, path: str) -> bytes:
        raw = await self._ask_host(Methods.FS_READ_FILE, path)
        content = raw.get("content") if isinstance(raw, dict) else None
        if not isinstance(content, bytes):
            raise OctError(f"the host sent no content for {path}")
        return content

    async def read_dir(self, path: str) -> dict[str, int]:
        raw = await self._ask_host(Methods.FS_READ_DIR, path)
        if not isinstance(raw, dict):
            raise OctError(f"the host sent no listing for {path}")
        return {str(k): int(v) for k, v in raw.items() if isinstance(v, (int, float))}

    async def write_file(self, path: str, content: bytes) -> None:
        await self._ask_host(Methods.FS_WRITE_FILE, path, {"content": content})

    async def delete(self, path: str) -> None:
        await self._ask_host(Methods.FS_DELETE, path)

    async def mkdir(self, path: str) -> None:
        await self._ask_host(Methods.FS_MKDIR, path)

    def send_chat(self, text: str, to: str | None = None) -> None:
        """A chat message to everyone, or (to = a peer id) to one peer."""
        if self.connection is None or self.closed.is_set():
            return
        if to is None:
            self.connection.broadcast(Methods.CHAT_MESSAGE, text)
        else:
            try:
                self.connection.notify(Methods.CHAT_DIRECT, to, text)
            except RequestFailed as exc:
                log.warning("cannot answer %s directly: %s", to, exc)
