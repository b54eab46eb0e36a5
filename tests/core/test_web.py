"""web_fetch against a real HTTP server on loopback."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from agent.approval import Decision
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


LOCAL_OK = [Decision("allow_once")] * 8  # every test site is on loopback: asked in every mode, allowed here


async def test_html_becomes_readable_text(make_harness: Any, site: Any) -> None:
    h = make_harness(decisions=LOCAL_OK)
    out = await use(h, "web_fetch", url=f"{site.base_url}/moved")
    assert out.startswith(f"{site.base_url}/html (HTTP 200)\n\n")
    assert "# Docs" in out and "`frob()`" in out and "var x" not in out


async def test_size_cap_errors_and_bad_urls(make_harness: Any, site: Any) -> None:
    h = make_harness(decisions=LOCAL_OK)
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
    from tests.fakellm import Reply, call

    h = make_harness(mode="ask", decisions=[Decision("allow_all"), *LOCAL_OK])
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
    approvals = h.of("approval_required")  # loopback: asked each time, "allow for the session" or not
    assert [a.url for a in approvals] == [f"{redirector.base_url}{p}" for p in hostile]


async def test_same_origin_redirects_are_followed(make_harness: Any, site: Any) -> None:
    from agent.tools.web import same_origin

    h = make_harness(decisions=LOCAL_OK)
    out = await use(h, "web_fetch", url=f"{site.base_url}/moved")
    assert out.startswith(f"{site.base_url}/html (HTTP 200)")
    assert same_origin("http://a.example/x", "https://a.example/y")
    assert not same_origin("https://a.example/x", "http://a.example/y")
    assert not same_origin("http://a.example/x", "http://a.example:8080/y")
    assert not same_origin("http://a.example/x", "http://169.254.169.254/latest")


async def test_allow_mode_asks_before_a_page_on_a_local_address(make_harness: Any, metadata: Any) -> None:
    """Issue 34: web_fetch in allow mode reached loopback and private addresses unasked."""
    from tests.fakellm import Reply, call

    url = f"{metadata.base_url}/latest/meta-data/iam"
    h = make_harness(mode="allow", decisions=[Decision("deny")])
    h.script(Reply(tool_calls=[call("web_fetch", url=url)]), Reply(text="done"))
    await h.run()
    assert "INSTANCE-CREDENTIALS" not in h.last_tool_message() and "denied" in h.last_tool_message()
    [asked] = h.of("approval_required")
    assert "local or private address (127.0.0.1)" in asked.summary


async def test_an_allow_rule_naming_the_host_lets_it_through(fake_llm: Any, metadata: Any, tmp_path: Any) -> None:
    from pydantic import SecretStr

    from agent.approval import ScriptedApprover
    from agent.config import Config
    from agent.permissions.settings import PermissionSettings
    from tests.conftest import TEST_KEY, open_harness

    config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode="allow",
                    permissions=PermissionSettings(allow=["web_fetch(domain:127.0.0.1)"]))
    h = open_harness(fake_llm, tmp_path / "ws", None, config, ScriptedApprover([]))
    out = await use(h, "web_fetch", url=f"{metadata.base_url}/latest/meta-data/iam")
    assert "INSTANCE-CREDENTIALS" in out and not h.of("approval_required")
    await h.session.close()


async def test_a_name_that_rebinds_to_a_local_address_after_the_check_reaches_nothing(
        make_harness: Any, metadata: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: public when web_fetch looks (no question in allow mode), loopback when it connects."""
    import socket

    answers = iter(["93.184.216.34"])
    real = socket.getaddrinfo

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.example":
            address = next(answers, "127.0.0.1")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    h = make_harness(mode="allow")
    port = metadata.base_url.rsplit(":", 1)[1]
    out = await use(h, "web_fetch", url=f"http://rebind.example:{port}/latest/meta-data/iam")
    assert "INSTANCE-CREDENTIALS" not in out and "127.0.0.1, a local or private address that was not approved" in out
    assert not h.of("approval_required")


def test_what_counts_as_local() -> None:
    from agent.tools.webaddress import public

    for address in ("127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
                    "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "224.0.0.1"):
        assert not public(address), address
    assert public("93.184.216.34") and public("2606:2800:220:1:248:1893:25c8:1946")
