"""The browser view: `GET /view`, a small page to follow a session and answer its approvals from
another device (a phone on the same network), behind the same bearer token as the API.

The page and its scripts and style are files beside this module (static/), served as they are: no
build step, nothing from another site. The page itself holds nothing of a session, so it needs no
token; its scripts ask for the token (or take `#token=` from the address's fragment, which no
server log sees) and send it as the `Authorization` header on every API request. Everything from
the session is put on the page as text, never as markup, and the Content-Security-Policy lets the
page run only its own script files: a hostile file or model output cannot run script in the page.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

STATIC = Path(__file__).with_name("static")
FILES = {"/view": ("view.html", "text/html"), "/view/log.js": ("log.js", "text/javascript"),
         "/view/view.js": ("view.js", "text/javascript"), "/view/view.css": ("view.css", "text/css")}
PUBLIC = frozenset({*FILES, "/"})  # served without the token: they hold nothing of a session
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY", "Cache-Control": "no-cache"}


def add_routes(app: web.Application) -> None:
    app.router.add_get("/", _root)
    for path in FILES:
        app.router.add_get(path, _file)


async def _root(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound("/view")


async def _file(request: web.Request) -> web.Response:
    name, kind = FILES[request.path]
    return web.Response(body=(STATIC / name).read_bytes(), content_type=kind, charset="utf-8", headers=HEADERS)
