"""Socket.IO transport: one binary `message` event per protocol message.

python-socketio's asyncio client reconnects on its own, with backoff, sending the same `x-oct-*`
headers; the server recognises the room token and hands back the same peer with the messages it
buffered meanwhile. Like the JS client we give a dropped connection 30 s (the server's grace
window) before treating it as lost. `write` never blocks: one writer task sends in order, and
while the connection is down messages wait in the queue until it is back.
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

TransportState = Literal["connected", "reconnecting", "reconnected", "lost", "kicked", "closed"]


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
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._up = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._ever_connected = False
        self._closing = False
        self._grace_task: asyncio.Task[None] | None = None
        self._sio.on("message", self._message)
        self._sio.on("connect", self._connected)
        self._sio.on("disconnect", self._disconnected)

    @property
    def connected(self) -> bool:
        return self._sio.connected

    async def connect(self, server_url: str, headers: dict[str, str]) -> None:
        url, path = socket_endpoint(server_url)
        self._writer = self._writer or asyncio.create_task(self._write_loop())
        try:
            await asyncio.wait_for(
                self._sio.connect(
                    url, headers=headers, transports=["websocket"], socketio_path=path, wait_timeout=10
                ),
                CONNECT_TIMEOUT,
            )
        except (socketio.exceptions.ConnectionError, asyncio.TimeoutError, OSError) as exc:
            reason = str(exc) or type(exc).__name__
            raise ServerUnreachable(f"cannot open the room connection: {reason}") from None

    async def _message(self, data: object) -> None:
        if isinstance(data, (bytes, bytearray, memoryview)):
            await self._on_message(bytes(data))
        else:
            log.warning("ignoring a non-binary socket message (%s)", type(data).__name__)

    async def _connected(self) -> None:
        if self._grace_task:
            self._grace_task.cancel()
            self._grace_task = None
        first = not self._ever_connected
        self._ever_connected = True
        self._up.set()
        self._on_state("connected" if first else "reconnected")

    async def _disconnected(self, reason: object = None) -> None:
        if self._closing:
            return
        if reason == socketio.AsyncClient.reason.SERVER_DISCONNECT:
            # The server ended the session (it does not take us back after that): no reconnect.
            self._closing = True
            self._up.clear()
            self._on_state("kicked")
            return
        log.info("room connection dropped (%s); reconnecting", reason)
        self._up.clear()
        self._on_state("reconnecting")
        if self._grace_task is None:
            self._grace_task = asyncio.create_task(self._expire())

    async def _expire(self) -> None:
        await asyncio.sleep(self._grace)
        self._grace_task = None
        if not self._sio.connected and not self._closing:
            self._closing = True
            await self._sio.shutdown()
            self._on_state("lost")

    def write(self, data: bytes) -> None:
        """Queue one message; it is sent in order as soon as the connection is up."""
        if not self._closing:
            self._queue.put_nowait(data)

    async def _write_loop(self) -> None:
        while True:
            data = await self._queue.get()
            while True:
                await self._up.wait()
                try:
                    await self._sio.send(data)
                    break
                except (socketio.exceptions.SocketIOError, aiohttp.ClientError, ConnectionError) as exc:
                    log.info("send failed (%s); resending after the reconnect", type(exc).__name__)
                    self._up.clear()  # dropped under our feet
            self._queue.task_done()

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
        for task in (self._grace_task, self._writer):
            if task:
                task.cancel()
        self._grace_task = self._writer = None
        await self._sio.shutdown()
        self._on_state("closed")
