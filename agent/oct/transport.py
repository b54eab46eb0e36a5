"""Socket.IO transport: one binary `message` event per protocol message.

python-socketio's asyncio client reconnects on its own, with backoff, sending the same `x-oct-*`
headers; the server recognises the room token and hands back the same peer with the messages it
buffered meanwhile. Like the JS client we give a dropped connection 30 s (the server's grace
window) before treating it as lost. A server that restarted forgets its rooms until their host
reconnects: it ends a guest's new connection at once ("room not found"), and python-socketio
does not retry after that, so we rejoin ourselves, with backoff, for the rest of the grace
period. Only a connection that was settled (a message arrived since it opened) and is then ended
by the server counts as "kicked". `write` never blocks: one writer task sends in order, and
while the connection is down messages wait in the queue until it is back; `on_sent(seq,
settled)` reports each write once it went out, and whether the connection was settled then.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import socketio

from agent.oct.errors import ServerUnreachable

log = logging.getLogger(__name__)

GRACE_SECONDS = 30.0
CONNECT_TIMEOUT = 30.0
CLIENT_NAME = "coder-tui"

TransportState = Literal["connected", "reconnecting", "refused", "reconnected", "settled", "lost", "kicked", "closed"]


def socket_endpoint(server_url: str) -> tuple[str, str]:
    """(origin URL, socket.io path): a server URL with a path keeps it, like the JS client."""
    parts = urlsplit(server_url)
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")), path + "socket.io"


class _Client(socketio.AsyncClient):
    async def _handle_eio_message(self, data: object) -> None:
        # A binary event is a header frame plus attachment frames, each handled in its own task;
        # a disconnect in between clears the pending header, and python-socketio would then try
        # to parse the orphaned attachment as a packet. Drop it instead.
        if isinstance(data, bytes) and self._binary_packet is None:
            log.debug("dropping a binary frame that arrived without its header (after a disconnect)")
            return
        await super()._handle_eio_message(data)


class SocketTransport:
    def __init__(
        self,
        on_message: Callable[[bytes], Awaitable[None]],
        on_state: Callable[[TransportState], None],
        grace: float = GRACE_SECONDS,
        reconnect_delay: float = 0.5,
        reconnect_delay_max: float = 5.0,
    ) -> None:
        self._on_message = on_message
        self._on_state = on_state
        self._grace = grace
        self._sio = _Client(
            reconnection=True,
            reconnection_attempts=0,
            reconnection_delay=reconnect_delay,
            reconnection_delay_max=reconnect_delay_max,
            randomization_factor=0.2,
            logger=False,
            engineio_logger=False,
            handle_sigint=False,  # Ctrl+C belongs to the application
            # a full document sync can exceed aiohttp's default 4 MB frame limit
            websocket_extra_options={"max_msg_size": 0},
        )
        self._queue: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue()
        self._up = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._ever_connected = False
        self._closing = False
        self._grace_task: asyncio.Task[None] | None = None
        self._rejoin_task: asyncio.Task[None] | None = None
        self._target: tuple[str, str, dict[str, str]] | None = None  # url, socket.io path, headers
        self._reconnect_delays = (reconnect_delay, reconnect_delay_max)
        self._seq = 0  # writes queued so far
        self.settled = False  # a message arrived since the connection last opened
        self.on_sent: Callable[[int, bool], None] = lambda seq, settled: None
        self._sio.on("message", self._message)
        self._sio.on("connect", self._connected)
        self._sio.on("disconnect", self._disconnected)

    @property
    def connected(self) -> bool:
        return self._sio.connected

    async def connect(self, server_url: str, headers: dict[str, str]) -> None:
        url, path = socket_endpoint(server_url)
        self._target = (url, path, headers)
        self._writer = self._writer or asyncio.create_task(self._write_loop())
        try:
            await self._open()
        except (socketio.exceptions.ConnectionError, asyncio.TimeoutError, OSError) as exc:
            reason = str(exc) or type(exc).__name__
            raise ServerUnreachable(f"cannot open the room connection: {reason}") from None

    async def _open(self) -> None:
        assert self._target is not None
        url, path, headers = self._target
        await asyncio.wait_for(
            self._sio.connect(url, headers=headers, transports=["websocket"], socketio_path=path, wait_timeout=10),
            CONNECT_TIMEOUT,
        )

    async def _message(self, data: object) -> None:
        if isinstance(data, (bytes, bytearray, memoryview)):
            await self._on_message(bytes(data))
        else:
            log.warning("ignoring a non-binary socket message (%s)", type(data).__name__)
        if not self.settled and self._sio.connected:
            # The server took us in (after handling its first message, so that a new identity is
            # known before anything counts as delivered): this connection is not about to be ended.
            self.settled = True
            self._cancel_grace()
            self._on_state("settled")

    def _cancel_grace(self) -> None:
        if self._grace_task:
            self._grace_task.cancel()
            self._grace_task = None

    async def _connected(self) -> None:
        first = not self._ever_connected
        self._ever_connected = True
        self.settled = False
        self._up.set()
        self._on_state("connected" if first else "reconnected")

    async def _disconnected(self, reason: object = None) -> None:
        if self._closing:
            return
        self._up.clear()
        was_settled, self.settled = self.settled, False
        if reason == socketio.AsyncClient.reason.SERVER_DISCONNECT and was_settled:
            # The server ended a session it knew (it does not take us back after that).
            self._closing = True
            self._on_state("kicked")
            return
        log.info("room connection dropped (%s); reconnecting", reason)
        refused = reason == socketio.AsyncClient.reason.SERVER_DISCONNECT
        self._on_state("refused" if refused else "reconnecting")
        if self._grace_task is None:
            self._grace_task = asyncio.create_task(self._expire())
        if refused and self._rejoin_task is None:
            # Ended before it settled: the server does not know the room (yet), e.g. right after a
            # restart, before the host is back. python-socketio leaves that to us.
            self._rejoin_task = asyncio.create_task(self._rejoin())

    async def _rejoin(self) -> None:
        delay, most = self._reconnect_delays
        try:
            while not self._closing and not self._sio.connected:
                await asyncio.sleep(delay)
                delay = min(delay * 2, most)
                try:
                    await self._open()
                except (socketio.exceptions.ConnectionError, asyncio.TimeoutError, OSError) as exc:
                    log.info("rejoining the room failed (%s); trying again in %.1f s", exc, delay)
        finally:
            self._rejoin_task = None

    async def _expire(self) -> None:
        await asyncio.sleep(self._grace)
        self._grace_task = None
        if not self.settled and not self._closing:
            self._closing = True
            if self._rejoin_task:
                self._rejoin_task.cancel()
            await self._sio.shutdown()
            self._on_state("lost")

    def write(self, data: bytes) -> int:
        """Queue one message; it is sent in order as soon as the connection is up. Returns its
        sequence number (0 when the transport is closed and nothing will be sent)."""
        if self._closing:
            return 0
        self._seq += 1
        self._queue.put_nowait((self._seq, data))
        return self._seq

    async def _write_loop(self) -> None:
        while True:
            seq, data = await self._queue.get()
            while True:
                await self._up.wait()
                try:
                    await self._sio.send(data)
                    break
                except (socketio.exceptions.SocketIOError, aiohttp.ClientError, ConnectionError) as exc:
                    log.info("send failed (%s); resending after the reconnect", type(exc).__name__)
                    self._up.clear()  # dropped under our feet
            self._queue.task_done()
            self.on_sent(seq, self.settled)

    async def drain(self, timeout: float = 2.0) -> None:
        """Wait (a bounded time) until queued messages have gone out."""
        if not self._up.is_set():
            return
        try:
            await asyncio.wait_for(self._queue.join(), timeout)
        except asyncio.TimeoutError:
            log.warning("%d messages were not sent before closing", self._queue.qsize())

    async def close(self) -> None:
        """Disconnect for good (after sending what is queued, when connected)."""
        if self._closing and self._writer is None:
            return
        await self.drain()
        self._closing = True
        for task in (self._grace_task, self._writer, self._rejoin_task):
            if task:
                task.cancel()
        self._grace_task = self._writer = self._rejoin_task = None
        await self._sio.shutdown()
        self._on_state("closed")
