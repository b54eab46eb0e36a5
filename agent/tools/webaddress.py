"""Where a web_fetch connects: a name's every address is checked, and the connection is made to a
checked one (agent/tools/web.py).

A page on a loopback, private, link-local or otherwise non-public address (`localhost`, the
cloud's metadata service at 169.254.169.254, a router, a database's HTTP port, a name that
resolves there) is asked for in every mode, allow mode included; the approval says which address.
The name is resolved again when the page is fetched and for each redirect, and the connection
goes to an address that was checked, so a name that answers with a public address when asked and
a private one when fetched (DNS rebinding) reaches nothing unapproved. With a proxy from the
environment (HTTP_PROXY, HTTPS_PROXY) the proxy resolves the name: the check is made before the
request, and the connection is the proxy's.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import typing
from urllib.parse import urlparse
from urllib.request import getproxies, proxy_bypass

DEFAULT_PORTS = {"http": 80, "https": 443}


def public(address: str) -> bool:
    """Whether an address is on the public internet (not loopback, private, link-local, shared, reserved)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    return ip.is_global and not ip.is_multicast


async def addresses(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (none when it does not resolve: the fetch then fails and says so)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def local_addresses(url: str) -> list[str]:
    """The non-public addresses the URL's host resolves to (empty: it is public, or does not resolve)."""
    parsed = urlparse(url)
    if not parsed.hostname:
        return []
    found = await addresses(parsed.hostname, parsed.port or DEFAULT_PORTS.get(parsed.scheme, 80))
    return [a for a in found if not public(a)]


def proxied(url: str) -> bool:
    """Whether the environment's proxy settings send this URL through a proxy."""
    parsed = urlparse(url)
    return bool(getproxies().get(parsed.scheme)) and not proxy_bypass(parsed.hostname or "")


def transport(allowed: set[str]) -> typing.Any:
    """An httpx transport that connects only to public addresses and to `allowed` (those approved)."""
    import httpcore
    import httpx

    class Checked(httpcore.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore.AnyIOBackend()

        async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                              local_address: str | None = None,
                              socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.AsyncNetworkStream:
            found = await addresses(host, port)
            refused = [a for a in found if not public(a) and a not in allowed]
            if refused or not found:
                why = f"resolves to {refused[0]}, a local or private address that was not approved" if refused \
                    else "does not resolve"
                raise httpcore.ConnectError(f"{host} {why}")
            for address in found[:-1]:
                try:
                    return await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                        socket_options=socket_options)
                except (httpcore.ConnectError, httpcore.ConnectTimeout):
                    continue
            return await self.inner.connect_tcp(found[-1], port, timeout=timeout, local_address=local_address,
                                                socket_options=socket_options)

        async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                      socket_options: typing.Iterable[typing.Any] | None = None) -> typing.Any:
            raise httpcore.ConnectError("web_fetch does not open Unix sockets")

        async def sleep(self, seconds: float) -> None:
            await asyncio.sleep(seconds)

    made = httpx.AsyncHTTPTransport()
    made._pool = httpcore.AsyncConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=Checked())
    return made
