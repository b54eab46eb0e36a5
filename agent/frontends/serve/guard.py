"""DNS rebinding and cross-site requests, refused before the token is even looked at.

A web page the user visits can make the browser send requests to `127.0.0.1:PORT` (through a DNS
name it rebinds to loopback, or straight from its own origin). So a server bound to loopback with
the token it generated itself answers only requests whose `Host` is a loopback name or address
with its own port, and any server refuses a browser `Origin` other than its own. With a token the
user configured (`--token`, CODER_TUI_SERVE_TOKEN), the server may sit behind a proxy under
another name: the Host check is left out, the Origin check stays. Refusals are 403 with a JSON
error.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # aiohttp is imported by `guard` only: serve's early listener (early.py) checks Host without it
    from aiohttp import web
    from aiohttp.typedefs import Middleware

    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split(netloc: str) -> tuple[str, int | None] | None:
    """(host, port) of a `host[:port]`; None when it is not one."""
    try:
        parts = urlsplit(f"//{netloc}")
        return (parts.hostname or ""), parts.port
    except ValueError:
        return None


def host_problem(host_header: str, own_port: int) -> str | None:
    """Why a Host header is not this loopback server's (None: it is)."""
    found = _split(host_header)
    if found is None or not found[0] or not is_loopback(found[0]) or (found[1] or 80) != own_port:
        return (f"Host {host_header!r} is not this server's (a loopback address with port {own_port}); "
                "a request through another name may come from a web page (DNS rebinding)")
    return None


def origin_problem(origin: str, host_header: str) -> str | None:
    """Why a browser Origin is not this server's own (None: it is, or there is none)."""
    parts = urlsplit(origin) if origin != "null" else None
    if parts is None or parts.scheme not in ("http", "https") or parts.netloc.lower() != host_header.lower():
        return f"Origin {origin!r} is not this server's: requests from web pages are refused"
    return None


def guard(check_host: bool) -> Middleware:
    from aiohttp import web

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        problem = None
        if check_host:
            sockname = request.transport.get_extra_info("sockname") if request.transport else None
            problem = host_problem(host, sockname[1] if sockname else 0)
        origin = request.headers.get("Origin")
        if problem is None and origin is not None:
            problem = origin_problem(origin, host)
        if problem is not None:
            return web.json_response({"error": problem}, status=403)
        return await handler(request)

    return middleware
