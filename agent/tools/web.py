"""web_fetch: read a web page as text (network: blocked in plan, asked in ask mode).

The approval names one address, so that is where the page comes from: redirects are followed
by us, one at a time, only while they stay on the approved origin (scheme, host and port; an
http -> https upgrade of the same host is allowed). A redirect anywhere else (another host or
port, which includes loopback, link-local and private addresses behind a public name) is not
followed: the model is told where it pointed and may ask for that address with its own
web_fetch call, which is approved (or blocked) on its own. A page on a loopback, private or
link-local address is asked for in every mode (agent/tools/webaddress.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlparse

from pydantic import Field

from agent.tools import webaddress
from agent.tools.base import Proposal, Tool, ToolArgs, ToolContext, ToolError

MAX_BYTES = 2 * 1024 * 1024
MAX_TEXT = 40_000
TIMEOUT = 30.0
MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
TEXTUAL_TYPES = ("text/", "application/json", "application/xml", "application/javascript",
                 "application/x-yaml", "application/toml")


class WebFetchArgs(ToolArgs):
    url: str = Field(description="http(s) address of the page.")
    prompt: str | None = Field(default=None, description="What you are looking for on the page.")


def html_to_text(html: str) -> str:
    import html2text

    converter = html2text.HTML2Text()
    converter.body_width = 0
    converter.ignore_images = True
    converter.protect_links = True
    return converter.handle(html).strip()


class WebFetch(Tool):
    name = "web_fetch"
    description = (
        "Fetch a web page (http/https) and return it as readable text (HTML becomes Markdown). "
        "Pages over 2 MB are cut. Give `prompt` to say what you are looking for."
    )
    Args = WebFetchArgs
    kind = "network"

    async def prepare(self, args: WebFetchArgs, ctx: ToolContext) -> Proposal:
        _check_url(args.url)
        local = await webaddress.local_addresses(args.url)
        if not local:
            return Proposal(summary=f"fetch {args.url}", url=args.url)
        ctx.extras.setdefault("web_local", {})[args.url] = set(local)
        why = (f"{urlparse(args.url).hostname} is a local or private address ({', '.join(local)}): "
               "a page there is asked for in every mode")
        return Proposal(summary=f"fetch {args.url} ({why})", url=args.url, always_ask=why)

    async def run(self, args: WebFetchArgs, ctx: ToolContext) -> str:
        import httpx

        _check_url(args.url)
        allowed: set[str] = ctx.extras.get("web_local", {}).pop(args.url, set())
        options: dict[str, Any] = {"transport": webaddress.transport(allowed)}
        if webaddress.proxied(args.url):  # the proxy connects: the name is checked here, before
            options = {}
            if set(await webaddress.local_addresses(args.url)) - allowed:
                raise ToolError(f"{args.url} now resolves to a local or private address that was not approved; "
                                "fetch it again to be asked")
        try:
            async with httpx.AsyncClient(follow_redirects=False, timeout=TIMEOUT, **options) as client:
                body, cut, status, ctype, final_url = await _fetch(client, args.url)
        except httpx.HTTPError as exc:
            raise ToolError(f"could not fetch {args.url}: {type(exc).__name__}: {exc}") from None
        if status >= 400:
            raise ToolError(f"{args.url} answered HTTP {status}")
        if ctype and not ctype.startswith(TEXTUAL_TYPES):
            raise ToolError(f"{args.url} is {ctype.split(';')[0]}, not text; web_fetch reads text pages only")
        text = body.decode(_charset(ctype), errors="replace")
        if "html" in ctype or text.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
            text = html_to_text(text)
        extract = ctx.extras.get("extract")
        if args.prompt and extract is not None and text.strip():
            return await _extracted(extract, final_url, status, args.prompt, text, cut)
        return _render(final_url, status, args.prompt, text, cut)


EXTRACT_INPUT = 200_000  # characters of page text the small model reads
EXTRACT_OUTPUT = 8_000  # characters of its answer passed on
EXTRACT_PROMPT = """You read a web page for a coding agent. Extract from the page what the request asks
for: the relevant facts, code, signatures, options and versions, quoted exactly where precision
matters. Say plainly when the page does not contain it. Answer with the extract only."""


def extraction_request(prompt: str, page: str) -> list[dict[str, str]]:
    cut = f"\n[… page cut at {EXTRACT_INPUT:,} characters …]" if len(page) > EXTRACT_INPUT else ""
    return [{"role": "system", "content": EXTRACT_PROMPT},
            {"role": "user", "content": f"Request: {prompt}\n\nPage:\n{page[:EXTRACT_INPUT]}{cut}"}]


async def _extracted(extract: object, url: str, status: int, prompt: str, text: str, cut: bool) -> str:
    """What the small model found on the page for `prompt` (the raw page when it cannot answer)."""
    from agent.llm import LLMError

    try:
        answer = (await extract(prompt, text)).strip()  # type: ignore[operator]
    except LLMError as exc:
        return _render(url, status, prompt, text, cut) + f"\n[extraction by the small model failed: {exc}]"
    if len(answer) > EXTRACT_OUTPUT:
        answer = answer[:EXTRACT_OUTPUT] + "\n[… extract cut …]"
    note = " (the page was over 2 MB; only the first 2 MB were read)" if cut else ""
    return (f"{url} (HTTP {status})\nextracted for: {prompt}{note}; the page has {len(text):,} characters "
            f"(fetch without `prompt` for the page itself)\n\n{answer}")


async def _fetch(client: object, url: str) -> tuple[bytes, bool, int, str, str]:
    """(body, cut, status, content type, final address), following same-origin redirects only."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", current, headers={"User-Agent": "coder-tui"}) as response:  # type: ignore[attr-defined]
            location = response.headers.get("location")
            if response.status_code not in REDIRECTS or not location:
                body, cut = await _read_capped(response)
                return body, cut, response.status_code, response.headers.get("content-type", ""), current
        target = urljoin(current, location)
        if not same_origin(url, target):
            raise ToolError(f"{current} redirected to {target}, another address than the one approved ({url}); "
                            "it was not followed. If that page is what you need, fetch it with its own "
                            "web_fetch call (it is approved on its own).")
        current = target
    raise ToolError(f"{url} redirected more than {MAX_REDIRECTS} times; stopped at {current}")


def same_origin(approved: str, target: str) -> bool:
    """Whether a redirect stays where the user approved: same host and port, same scheme or http -> https."""
    a, b = urlparse(approved), urlparse(target)
    if b.scheme not in ("http", "https") or not b.hostname or a.hostname is None:
        return False
    default = {"http": 80, "https": 443}
    a_port, b_port = a.port or default[a.scheme], b.port or default[b.scheme]
    upgrade = a.scheme == "http" and b.scheme == "https" and a_port == 80 and b_port == 443
    return a.hostname.lower() == b.hostname.lower() and (
        (a.scheme == b.scheme and a_port == b_port) or upgrade) and b.username is None and b.password is None


def _check_url(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ToolError(f"{url!r} is not an http(s) URL")


def _charset(ctype: str) -> str:
    for part in ctype.split(";"):
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


async def _read_capped(response: object) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():  # type: ignore[attr-defined]
        body.extend(chunk)
        if len(body) > MAX_BYTES:
            return bytes(body[:MAX_BYTES]), True
    return bytes(body), False


def _render(url: str, status: int, prompt: str | None, text: str, cut: bool) -> str:
    header = [f"{url} (HTTP {status})"]
    if prompt:
        header.append(f"looking for: {prompt}")
    if cut:
        header.append("[the page was over 2 MB; only the first 2 MB were read]")
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n[… {len(text) - MAX_TEXT} more characters of page text not shown]"
    return "\n".join(header) + "\n\n" + text
