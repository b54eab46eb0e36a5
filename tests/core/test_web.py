"""web_fetch against a real HTTP server on loopback."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from tests.core.test_tools import use
from tests.threaded import ThreadedApp


@pytest.fixture
def site() -> Any:
    async def html(request: web.Request) -> web.Response:
        body = "<html><head><title>T</title><script>var x;</script></head><body><h1>Docs</h1>" \
               "<p>Use <code>frob()</code> <a href='/x'>here</a>.</p></body></html>"
        return web.Response(text=body, content_type="text/html")

    async def big(request: web.Request) -> web.Response:
        return web.Response(text="y" * (3 * 1024 * 1024), content_type="text/plain")

    async def image(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG", content_type="image/png")

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="no")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/html")

    def build() -> web.Application:
        app = web.Application()
        for path, handler in (("/html", html), ("/big", big), ("/image", image), ("/missing", missing),
                              ("/moved", moved)):
            app.router.add_get(path, handler)
        return app

    server = ThreadedApp(build).start()
    yield server
    server.stop()


async def test_html_becomes_readable_text(make_harness: Any, site: Any) -> None:
    h = make_harness()
    out = await use(h, "web_fetch", url=f"{site.base_url}/moved")
    assert out.startswith(f"{site.base_url}/html (HTTP 200)\n\n")
    assert "# Docs" in out and "`frob()`" in out and "var x" not in out


async def test_size_cap_errors_and_bad_urls(make_harness: Any, site: Any) -> None:
    h = make_harness()
    out = await use(h, "web_fetch", url=f"{site.base_url}/big")
    assert "only the first 2 MB were read" in out and "more characters of page text not shown" in out
    assert await use(h, "web_fetch", url=f"{site.base_url}/image") == (
        f"Error: {site.base_url}/image is image/png, not text; web_fetch reads text pages only")
    assert await use(h, "web_fetch", url=f"{site.base_url}/missing") == f"Error: {site.base_url}/missing answered HTTP 404"
    assert await use(h, "web_fetch", url="ftp://example.com/x") == "Error: 'ftp://example.com/x' is not an http(s) URL"
    out = await use(h, "web_fetch", url="http://127.0.0.1:9/")
    assert out.startswith("Error: could not fetch http://127.0.0.1:9/: ConnectError")
