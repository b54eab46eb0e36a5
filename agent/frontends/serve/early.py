"""serve's listening socket, bound before its heavy imports (issue 22: ready within 0.5 s of launch).

Importing aiohttp, pydantic and the agent core takes most of a second. `coder-tui serve` binds its
socket first (the standard library only), prints where it listens, and a thread answers
`GET /api/health` on it while the main thread imports the rest. Every other request (and a health
request this thread cannot take whole: split, pipelined, with a body, from a Host or Origin the
guard would refuse) is left unread in its connection; when the application is ready, `take()`
stops the thread and hands the listening socket and those connections to aiohttp, which reads them
as if it had accepted them. Nothing is refused for arriving early.
"""

from __future__ import annotations

import json
import selectors
import socket
import threading

from agent import __version__
from agent.frontends.serve.guard import host_problem, origin_problem

HEAD_LIMIT = 16384  # bytes of a request head looked at (a longer one waits for aiohttp)


class EarlyListener:
    def __init__(self, host: str, port: int, check_host: bool) -> None:
        """Bound and listening (OSError when it cannot); `start()` begins answering health."""
        family, _type, _proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        self.sock = socket.create_server(address[:2], family=family, backlog=128)
        self.sock.setblocking(False)
        self.host, self.port = host, self.sock.getsockname()[1]
        self.check_host = check_host
        self.waiting: list[socket.socket] = []  # accepted connections left for aiohttp, their bytes unread
        self._wake_reader, self._wake = socket.socketpair()
        self._taken = False
        self._thread = threading.Thread(target=self._run, name="serve-early-health", daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> None:
        self._thread.start()

    def take(self) -> tuple[socket.socket, list[socket.socket]]:
        """Stops answering; (the listening socket, the connections whose requests aiohttp answers)."""
        self._stop()
        taken, self.waiting, self._taken = self.waiting, [], True
        return self.sock, taken

    def close(self) -> None:
        """Stops and closes what was not taken (the server did not start after all)."""
        self._stop()
        for conn in ([] if self._taken else [self.sock]) + self.waiting:
            conn.close()
        self.waiting = []

    def _stop(self) -> None:
        if self._thread.is_alive():
            self._wake.send(b"x")
            self._thread.join()
        self._wake.close()  # closing twice does nothing
        self._wake_reader.close()

    def _run(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.sock, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while True:
                for key, _events in selector.select():
                    if key.fileobj is self._wake_reader:
                        return
                    if key.fileobj is self.sock:
                        self._accept(selector)
                    else:
                        selector.unregister(key.fileobj)  # looked at once: answered, or left for aiohttp
                        self._look(key.fileobj)  # type: ignore[arg-type]

    def _accept(self, selector: selectors.BaseSelector) -> None:
        try:
            conn, _address = self.sock.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return
        conn.setblocking(False)
        self.waiting.append(conn)
        selector.register(conn, selectors.EVENT_READ)

    def _look(self, conn: socket.socket) -> None:
        """Answers the connection's request when it is a whole, plain health request; else leaves it."""
        try:
            data = conn.recv(HEAD_LIMIT, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data and health_head(data, self.port if self.check_host else None) is None:
            return
        self.waiting.remove(conn)
        if data:  # the head exactly (nothing follows it), then the answer; the client reconnects for more
            conn.settimeout(5)
            try:
                conn.recv(len(data))
                conn.sendall(health_response(data.startswith(b"HEAD ")))
            except OSError:
                pass
        conn.close()


def health_head(data: bytes, own_port: int | None) -> bytes | None:
    """`data` when it is exactly one whole `GET /api/health` head that serve would answer 200
    (no body, nothing after it, a Host and Origin its guard lets through); None otherwise."""
    if not data.endswith(b"\r\n\r\n") or data.count(b"\r\n\r\n") != 1:
        return None
    request, *lines = data[:-4].decode("latin-1").split("\r\n")
    parts = request.split(" ")
    if len(parts) != 3 or parts[0] not in ("GET", "HEAD") or parts[1].split("?")[0] != "/api/health" \
            or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        return None
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or name != name.strip() or name.lower() in headers:
            return None
        headers[name.lower()] = value.strip()
    if headers.get("content-length", "0") != "0" or {"transfer-encoding", "upgrade", "expect"} & headers.keys():
        return None
    host = headers.get("host", "")
    if own_port is not None and host_problem(host, own_port) is not None:
        return None
    if "origin" in headers and origin_problem(headers["origin"], host) is not None:
        return None
    return data


def health_response(head_only: bool = False) -> bytes:
    """`GET /api/health`'s answer, as the application gives it, on a connection then closed."""
    body = json.dumps({"status": "ok", "version": __version__}).encode()
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode()
    return head if head_only else head + body
