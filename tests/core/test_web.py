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


@pytest.fixture
def metadata() -> Any:
    """A loopback service with something the approved page must not reach (a metadata-style address)."""
    async def secret(request: web.Request) -> web.Response:
        return web.Response(text="INSTANCE-CREDENTIALS-4711", content_type="text/plain")

    def build() -> web.Application:
        app = web.Application()
        app.router.add_get("/latest/meta-data/iam", secret)
        return app

    server = ThreadedApp(build).start()
    yield server
    server.stop()


@pytest.fixture
def redirector(metadata: Any) -> Any:
    """A hostile site: redirects to the metadata service, to another name for itself, in a loop."""
    async def to_metadata(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"{metadata.base_url}/latest/meta-data/iam")

    async def to_localhost(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(f"http://localhost:{request.url.port}/page")

    async def hop(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently(f"/hop/{int(request.match_info['n']) + 1}")

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="the page", content_type="text/plain")

    async def userinfo(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://evil@127.0.0.1:{request.url.port}/page")

    async def scheme(request: web.Request) -> web.Response:
        raise web.HTTPFound("file:///etc/passwd")

    def build() -> web.Application:
        app = web.Application()
        for path, handler in (("/meta", to_metadata), ("/localhost", to_localhost), ("/hop/{n}", hop),
                              ("/page", page), ("/userinfo", userinfo), ("/scheme", scheme)):
            app.router.add_get(path, handler)
        return app

    server = ThreadedApp(build).start()
    yield server
    server.stop()


async def test_a_redirect_leaves_the_approved_address_only_through_its_own_approval(make_harness: Any,
                                                                                   redirector: Any) -> None:
    from agent.approval import Decision
    from tests.fakellm import Reply, call

    h = make_harness(mode="ask", decisions=[Decision("allow_all")])
    hostile = ["/meta", "/localhost", "/userinfo", "/scheme", "/hop/0"]
    h.script(*(Reply(tool_calls=[call("web_fetch", url=f"{redirector.base_url}{p}")]) for p in hostile),
             Reply(text="done"))
    await h.run()
    results = [m["content"] for m in h.session.messages if m["role"] == "tool"]
    assert len(results) == len(hostile)
    assert all("INSTANCE-CREDENTIALS" not in r and "the page" not in r and "root:" not in r for r in results)
    assert "redirected to http://127.0.0.1:" in results[0] and "it was not followed" in results[0]
    assert "redirected to http://localhost:" in results[1] and "its own web_fetch call" in results[1]
    assert "redirected more than 5 times" in results[4]
    approvals = h.of("approval_required")
    assert len(approvals) == 1 and approvals[0].url == f"{redirector.base_url}/meta"


async def test_same_origin_redirects_are_followed(make_harness: Any, site: Any) -> None:
    from agent.tools.web import same_origin

    h = make_harness()
    out = await use(h, "web_fetch", url=f"{site.base_url}/moved")
    assert out.startswith(f"{site.base_url}/html (HTTP 200)")
    assert same_origin("http://a.example/x", "https://a.example/y")
    assert not same_origin("https://a.example/x", "http://a.example/y")
    assert not same_origin("http://a.example/x", "http://a.example:8080/y")
    assert not same_origin("http://a.example/x", "http://169.254.169.254/latest")
