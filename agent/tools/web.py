"""web_fetch: read a web page as text (network: blocked in plan, asked in ask mode)."""

from __future__ import annotations

from urllib.parse import urlparse

from pydantic import Field

from agent.tools.base import Proposal, Tool, ToolArgs, ToolContext, ToolError

MAX_BYTES = 2 * 1024 * 1024
MAX_TEXT = 40_000
TIMEOUT = 30.0
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
        return Proposal(summary=f"fetch {args.url}", url=args.url)

    async def run(self, args: WebFetchArgs, ctx: ToolContext) -> str:
        import httpx

        _check_url(args.url)
        try:
            async with httpx.AsyncClient(follow_redirects=True, timeout=TIMEOUT) as client:
                async with client.stream("GET", args.url, headers={"User-Agent": "coder-tui"}) as response:
                    body, cut = await _read_capped(response)
                    status, ctype = response.status_code, response.headers.get("content-type", "")
                    final_url = str(response.url)
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
