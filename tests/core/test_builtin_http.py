"""The built-in clients' HTTP as deployments need it: a proxy from the environment, a company CA bundle
named by REQUESTS_CA_BUNDLE, and an error that arrives in the middle of a stream (Anthropic's
`overloaded_error` event) retried and worded as an error answer is."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, web

from agent.llm import LLM, LLMError
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import FakeLLM, Reply
from tests.threaded import ThreadedApp

KEY = "sk-test-http-0123456789"
HELLO = [{"role": "user", "content": "hi"}]


async def ask(model: LLM) -> str:
    reply = await model.complete(HELLO, [], lambda _t: None, lambda *_a: None)
    return reply.text


class ForwardingProxy:
    """An HTTP proxy on loopback: forwards each absolute-form request and records its target."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.server = ThreadedApp(self._app)

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        return app

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        target = f"http://{request.headers['Host']}{request.rel_url}"
        self.seen.append(target)
        async with ClientSession() as session, session.request(request.method, target, data=await request.read(),
                                                               headers={"Content-Type": "application/json"}) as answer:
            response = web.StreamResponse(status=answer.status, headers={"Content-Type": answer.content_type})
            await response.prepare(request)
            async for piece in answer.content.iter_any():
                await response.write(piece)
            await response.write_eof()
            return response


async def test_a_proxy_from_the_environment_carries_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = ForwardingProxy()
    proxy.server.start()
    try:
        with FakeLLM(Reply(text="through the proxy")) as server:
            monkeypatch.setenv("HTTP_PROXY", proxy.server.base_url)
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            assert await ask(LLM(server.model, server.url, KEY)) == "through the proxy"
    finally:
        proxy.server.stop()
    assert proxy.seen == [f"{server.url}/chat/completions"]


def _self_signed(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "coder-tui test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "ca.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


@pytest.fixture
def https_llm(tmp_path: Path) -> Iterator[tuple[FakeLLM, Path]]:
    """The scripted OpenAI server behind TLS with a certificate of a CA of its own."""
    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = FakeLLM(Reply(text="over TLS"), Reply(text="never"))
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(server._app(), handle_signals=False)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server.https_url = f"https://127.0.0.1:{port}/v1"  # type: ignore[attr-defined]
    try:
        yield server, cert
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


async def test_a_ca_bundle_named_by_requests_ca_bundle_is_trusted(https_llm: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    server, cert = https_llm
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    assert await ask(LLM(server.model, server.https_url, KEY)) == "over TLS"


def test_without_the_bundle_the_certificate_is_refused_in_one_line(https_llm: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    server, _cert = https_llm
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE"):
        monkeypatch.delenv(variable, raising=False)
    retries: list[str] = []
    with pytest.raises(LLMError) as caught:
        asyncio.run(LLM(server.model, server.https_url, KEY).complete(HELLO, [], lambda _t: None,
                                                                      lambda why, *_a: retries.append(why)))
    said = str(caught.value)
    assert said.startswith(f"cannot connect to {server.https_url}: its TLS certificate is not trusted (")
    assert "REQUESTS_CA_BUNDLE" in said and "\n" not in said and retries == []  # a retry cannot help
    assert server.requests == []


class OverloadedMidStream(FakeAnthropic):
    """Starts the answer, then sends Anthropic's `error` event (as the API does when overloaded mid-stream)."""

    failures = 1

    def _events(self, reply: Reply, usage: dict[str, int]) -> list[bytes]:
        events = super()._events(reply, usage)
        if self.failures <= 0:
            return events
        self.failures -= 1
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return events[:3] + [self.sse(error, "error")]


async def test_an_error_event_mid_stream_is_retried_and_said_as_an_error_answer_is() -> None:
    retries: list[str] = []
    with OverloadedMidStream(Reply(text="first try"), Reply(text="second try")) as server:
        reply = await LLM(server.model, server.url, KEY, retry_base_delay=0.01).complete(
            HELLO, [], lambda _t: None, lambda why, *_a: retries.append(why))
    assert reply.text == "second try"
    assert retries == ["Anthropic is overloaded (overloaded_error)"]
