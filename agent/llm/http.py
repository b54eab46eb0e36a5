"""The built-in clients' HTTP: one httpx client per event loop, streamed server-sent events, and
every failure mapped onto the kinds and words of agent/llm/errors.py.

Proxies come from the environment as httpx reads them (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY,
NO_PROXY); trusted certificates from SSL_CERT_FILE / SSL_CERT_DIR (httpx) or REQUESTS_CA_BUNDLE /
CURL_CA_BUNDLE (what Python tools behind a corporate proxy are usually given), else certifi's.
A stream that sends nothing for the model's timeout is a retryable timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import ssl
import sys
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from agent.llm.errors import (Failure, LLMError, Place, body_message, chain_text, connection_kind, failure,
                              header_wait)
from agent.llm.types import Retryable

if TYPE_CHECKING:
    import httpx

CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")  # httpx itself reads SSL_CERT_FILE and SSL_CERT_DIR
_CONTEXT = re.compile(r"context_length_exceeded|maximum context length|prompt is too long|context window|"
                      r"too many tokens|input is too long|exceeds? the (?:model's )?(?:context|maximum)", re.IGNORECASE)
_FILTERED = re.compile(r"content_filter|content management policy|content_policy_violation|"
                       r"ResponsibleAIPolicyViolation", re.IGNORECASE)
PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, httpx.AsyncClient]] = \
    weakref.WeakKeyDictionary()


def client(url: str) -> httpx.AsyncClient:
    """This event loop's client for `url` (its connections are reused from one request to the next).
    A plain-HTTP address with no proxy in the environment (a local server) gets one without TLS
    settings: loading the CA bundle costs a cold start about 20 ms for nothing."""
    plain = url.startswith("http://") and not any(os.environ.get(v) for v in PROXY_VARIABLES)
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    found = clients.get(plain)
    if found is None or found.is_closed:
        with _skipping():
            import httpx

            # httpcore is imported here (by the transport), not by `import httpx`: still without h2
            if plain:
                found = httpx.AsyncClient(verify=False, trust_env=False, follow_redirects=False)
            else:
                found = httpx.AsyncClient(verify=_verify(), trust_env=True, follow_redirects=False)
        clients[plain] = found
    return found


SKIPPED = ("httpx._main", "h2")


def import_httpx() -> None:
    """Import httpx without what a request never uses: its command line (`httpx._main`, which
    imports click, rich and pygments: about 40 ms of a cold start, and rich is a UI library the core
    never imports) and HTTP/2 (h2 and hpack when installed: about 25 ms; our requests are HTTP/1.1).
    Both are optional imports in httpx and httpcore, which fall back to stubs when they fail; the
    blocks are lifted once httpx is in, so that any other library may still import h2."""
    if "httpx" in sys.modules:
        return
    with _skipping():
        import httpx  # noqa: F401


@contextmanager
def _skipping() -> Iterator[None]:
    """SKIPPED unimportable within (those not imported yet), importable again after."""
    blocked = [name for name in SKIPPED if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def _verify() -> ssl.SSLContext | bool:
    """certifi's bundle (httpx's default, with its SSL_CERT_* variables), or a CA bundle variable's."""
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return True
    bundle = next((os.environ[v] for v in CA_VARIABLES if os.environ.get(v)), None)
    return ssl.create_default_context(cafile=bundle) if bundle else True


def status_failure(status: int, text: str, headers: Any, place: Place) -> Failure:
    """The failure an HTTP error answer is (its body `text` as the provider sent it)."""
    message = body_message(text) if text.strip() else f"HTTP {status}"
    wait = header_wait(headers)
    if status in (401, 403):
        kind = "auth"
    elif status == 404:
        kind = "unknown_model"
    elif status == 429:
        kind = "rate_limited"
    elif status == 529 or "overloaded_error" in text:
        kind = "overloaded"
    elif status in (400, 413, 422) and _CONTEXT.search(text):
        kind = "context_window"
    elif status == 400 and _FILTERED.search(text):
        kind = "content_filter"
    elif status == 408:
        kind = "timeout"
    elif status >= 500:
        kind = "server"
    else:
        kind = "request"
    return failure(kind, place, message, status, wait)


def raise_failure(found: Failure) -> None:
    """Raise `found` as the loop expects: Retryable when another attempt can help, else LLMError."""
    if found.retryable:
        raise Retryable(found.message, found.retry_after, found.kind)
    raise LLMError(found.message, found.kind)


def transport_failure(exc: Exception, place: Place, streaming: bool, timeout: float) -> Failure:
    """The failure an httpx exception is (`streaming`: the answer had started to arrive)."""
    import_httpx()
    import httpx

    raw = chain_text(exc)
    if isinstance(exc, httpx.TimeoutException):
        if streaming:
            return Failure("timeout", f"the model sent nothing for {timeout:g} s")
        return failure("timeout", place, f"no answer in {timeout:g} s")
    if isinstance(exc, httpx.ConnectError):
        if "CERTIFICATE_VERIFY_FAILED" in raw:  # not worth a retry: only a CA bundle changes it
            reason = raw.split("certificate verify failed:", 1)[-1].split(")")[0].strip() or "verify failed"
            return failure("untrusted", place, reason)
        return failure(connection_kind(raw) or "cannot_connect", place, raw=raw)
    if streaming:
        return failure("stream_broke", place, str(exc) or type(exc).__name__)
    return failure("failed", place, str(exc) or type(exc).__name__)


@asynccontextmanager
async def events(url: str, headers: dict[str, str], body: dict[str, Any], timeout: float,
                 place: Place) -> AsyncIterator[AsyncIterator[tuple[str, dict[str, Any]]]]:
    """POST `body` and yield the answer's server-sent events as (event name, JSON data); an error
    answer or a failed connection is raised as Retryable or LLMError."""
    import_httpx()
    import httpx

    limits = httpx.Timeout(timeout, connect=min(timeout, 30.0))
    started = False
    try:
        async with client(url).stream("POST", url, json=body, headers=headers, timeout=limits) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode("utf-8", "replace")
                raise_failure(status_failure(response.status_code, text, response.headers, place))
            started = True
            yield _sse(response.aiter_lines(), place)
    except httpx.HTTPError as exc:
        raise_failure(transport_failure(exc, place, started, timeout))


async def _sse(lines: AsyncIterator[str], place: Place) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event, data) of each event; `[DONE]` ends the stream; data that is not JSON is skipped."""
    event, data = "", []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif not line and data:
            text, name = "\n".join(data), event
            event, data = "", []
            if text == "[DONE]":
                return
            try:
                value = json.loads(text)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield name, value
    if data and (text := "\n".join(data)) != "[DONE]":
        try:
            value = json.loads(text)
        except ValueError:
            return
        if isinstance(value, dict):
            yield event, value


def stream_error(data: dict[str, Any], place: Place) -> None:
    """Raise the error an event carries mid-stream (`{"error": {...}}`, Anthropic's `error` event)."""
    error = data.get("error")
    if not error:
        return
    text = json.dumps({"error": error})
    kind = str(error.get("type") or error.get("code") or "") if isinstance(error, dict) else ""
    if "overloaded" in kind:
        raise_failure(failure("overloaded", place))
    if "rate_limit" in kind:
        raise_failure(failure("rate_limited", place, body_message(text)))
    if _CONTEXT.search(text):
        raise_failure(failure("context_window", place, body_message(text)))
    raise_failure(failure("server", place, body_message(text), 500))
