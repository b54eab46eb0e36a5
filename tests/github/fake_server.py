"""A fake GitHub REST API on loopback, backed by real bare git repositories.

It runs aiohttp in a background thread (`tests.threaded.ThreadedApp`), so async tests, sync
tests and subprocesses (through its URL) all talk to it over a real socket. It implements the endpoints
PyGithub calls for coder-tui: repository, branches and refs, git trees/blobs/commits, commits,
contents, issues and comments, pulls, rate_limit and user. Every answer carries rate-limit
headers; tests can exhaust the limit, inject failures per route, and read back the requests,
pull requests and comments it recorded.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.github.fake_git import BareStore
from tests.threaded import ThreadedApp

Handler = Any


@dataclass
class TokenInfo:
    login: str
    push: bool = True
    name: str = ""
    email: str = ""
    user_id: int = 1


@dataclass
class FakeRepo:
    owner: str
    name: str
    store: BareStore
    private: bool = False
    default_branch: str = "main"
    archived: bool = False
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_number: int = 1
    next_comment: int = 1000

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def take_number(self) -> int:
        number = self.next_number
        self.next_number += 1
        return number


@dataclass
class Injected:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    times: int


@dataclass
class Held:
    """Requests matching method and path wait until `release` is set, then fail with 502 (a server
    that hung while its client went away); `arrived` is set when the first one comes."""

    method: str
    pattern: re.Pattern[str]
    times: int
    release: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: str
    status: int
    authenticated: bool


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.headers = dict(headers or {})
        self.body = {"message": message, "documentation_url": "https://docs.github.com/rest", **extra}


RATE_EXCEEDED = "API rate limit exceeded for user ID 1. (But here's the good news: ...)"


class FakeGitHub:
    """The server. Use as a context manager, or call start()/stop()."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repos: dict[str, FakeRepo] = {}
        self.tokens: dict[str, TokenInfo] = {}
        self.injected: list[Injected] = []
        self.held: list[Held] = []
        self.requests: list[Recorded] = []
        self.contents_max = 1_000_000  # GitHub's contents API stops inlining above 1 MB
        self.tree_limit = 100_000  # entries before a recursive tree answer is truncated
        self.limits = {"token": 5000, "anonymous": 60}
        self._usage: dict[str, int] = {}
        self._window_reset = int(time.time()) + 3600
        self._exhausted_until = 0.0
        self._exhaust_pending: float | None = None
        self._lock = threading.RLock()
        self._server = ThreadedApp(self._build_app)
        self.url = ""

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeGitHub:
        self._server.start()
        self.url = self._server.base_url
        return self

    def _build_app(self) -> web.Application:
        from tests.github import fake_routes_git, fake_routes_issues

        app = web.Application(middlewares=[self._middleware], client_max_size=200 * 1024 * 1024)
        fake_routes_git.register(app, self)
        fake_routes_issues.register(app, self)
        return app

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test setup -------------------------------------------------------------------------
    def add_token(self, token: str, login: str, push: bool = True) -> TokenInfo:
        info = TokenInfo(login, push, name=login.title(), email=f"{login}@users.example.test",
                         user_id=len(self.tokens) + 1)
        self.tokens[token] = info
        return info

    def create_repo(
        self,
        full_name: str,
        files: dict[str, bytes | str] | None = None,
        private: bool = False,
        default_branch: str = "main",
    ) -> FakeRepo:
        owner, name = full_name.split("/")
        store = BareStore(self.root / "repos" / owner / f"{name}.git")
        repo = FakeRepo(owner, name, store, private, default_branch)
        if files:
            store.commit_files(default_branch, dict(files), "Initial commit", ("Owner", "owner@example.test"))
        store.repo.git.symbolic_ref("HEAD", f"refs/heads/{default_branch}")
        with self._lock:
            self.repos[full_name.lower()] = repo
        return repo

    def inject(
        self,
        method: str,
        path_regex: str,
        status: int,
        message: str = "Injected failure",
        times: int = 1,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next `times` requests matching method and path get this error instead."""
        with self._lock:
            self.injected.append(
                Injected(method.upper(), re.compile(path_regex), status,
                         {"message": message}, dict(headers or {}), times)
            )

    def hold(self, method: str, path_regex: str, times: int = 1) -> Held:
        """The next `times` requests matching method and path hang until released (see Held)."""
        held = Held(method.upper(), re.compile(path_regex), times)
        with self._lock:
            self.held.append(held)
        return held

    async def _wait_if_held(self, request: web.Request) -> None:
        with self._lock:
            held = next((h for h in self.held if h.times > 0 and h.method == request.method
                         and h.pattern.search(request.path)), None)
            if held is not None:
                held.times -= 1
        if held is not None:
            held.arrived.set()
            await asyncio.to_thread(held.release.wait, 120)
            raise ApiError(502, "Server Error")

    def exhaust_rate_limit(self, reset_in: float) -> None:
        """Counted requests fail with the primary rate-limit error for reset_in seconds.

        The clock starts at the next counted request, not now: a client that takes long to start
        on a busy machine still meets the limit (as it would meet a real one), instead of arriving
        after it has reset."""
        with self._lock:
            self._exhaust_pending = reset_in

    def calls(self, method: str, path_regex: str) -> list[Recorded]:
        pattern = re.compile(path_regex)
        with self._lock:
            return [r for r in self.requests if r.method == method and pattern.search(r.path)]

    def repo(self, full_name: str) -> FakeRepo:
        return self.repos[full_name.lower()]

    def add_issue(self, full_name: str, title: str, body: str = "", labels: tuple[str, ...] = (),
                  comments: tuple[str, ...] = (), state: str = "open") -> int:
        from tests.github.fake_routes_issues import add_issue

        return add_issue(self, self.repo(full_name), title, body, labels, comments, state)

    # -- request pipeline -------------------------------------------------------------------
    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        identity, token, bad = self._identify(request)
        try:
            if bad:
                raise ApiError(401, "Bad credentials")
            self._check_injected(request)
            await self._wait_if_held(request)
            if request.path != "/rate_limit":
                self._spend(identity, token)
            response = await handler(request)
        except ApiError as exc:
            response = web.json_response(exc.body, status=exc.status)
            response.headers.update(exc.headers)
        except web.HTTPException as exc:
            response = web.json_response({"message": "Not Found"} if exc.status == 404 else
                                         {"message": exc.reason}, status=exc.status)
        self._rate_headers(response, identity, token)
        with self._lock:
            self.requests.append(Recorded(request.method, request.path, request.query_string,
                                          response.status, token is not None))
        return response

    def _identify(self, request: web.Request) -> tuple[str, TokenInfo | None, bool]:
        """(rate-limit identity, token owner, whether the credentials were bad)."""
        header = request.headers.get("Authorization", "")
        if not header:
            return f"anon:{request.remote}", None, False
        scheme, _, value = header.partition(" ")
        info = self.tokens.get(value.strip()) if scheme.lower() in ("token", "bearer") else None
        if info is None:
            return "bad", None, True
        return f"user:{info.login}", info, False

    def _check_injected(self, request: web.Request) -> None:
        with self._lock:
            for item in self.injected:
                if item.times > 0 and item.method == request.method and item.pattern.search(request.path):
                    item.times -= 1
                    raise ApiError(item.status, item.body["message"], item.headers)

    def _limit(self, token: TokenInfo | None) -> int:
        return self.limits["token" if token else "anonymous"]

    def _spend(self, identity: str, token: TokenInfo | None) -> None:
        with self._lock:
            now = time.time()
            if now >= self._window_reset:
                self._usage.clear()
                self._window_reset = int(now) + 3600
            if self._exhaust_pending is not None:
                self._exhausted_until, self._exhaust_pending = now + self._exhaust_pending, None
            if now < self._exhausted_until or self._usage.get(identity, 0) >= self._limit(token):
                raise ApiError(403, RATE_EXCEEDED)
            self._usage[identity] = self._usage.get(identity, 0) + 1

    def rate_status(self, identity: str, token: TokenInfo | None) -> dict[str, int]:
        with self._lock:
            limit = self._limit(token)
            used = self._usage.get(identity, 0)
            reset = self._window_reset
            until = self._exhausted_until
            if self._exhaust_pending is not None:
                until = time.time() + self._exhaust_pending
            if time.time() < until:
                used, reset = limit, int(until + 0.999)
            return {"limit": limit, "remaining": max(0, limit - used), "reset": reset, "used": used}

    def _rate_headers(self, response: web.StreamResponse, identity: str, token: TokenInfo | None) -> None:
        status = self.rate_status(identity, token)
        response.headers["X-RateLimit-Limit"] = str(status["limit"])
        response.headers["X-RateLimit-Remaining"] = str(status["remaining"])
        response.headers["X-RateLimit-Reset"] = str(status["reset"])
        response.headers["X-RateLimit-Used"] = str(status["used"])
        response.headers["X-RateLimit-Resource"] = "core"

    # -- helpers for route modules ----------------------------------------------------------
    def caller(self, request: web.Request) -> TokenInfo | None:
        return self._identify(request)[1]

    def identity(self, request: web.Request) -> str:
        return self._identify(request)[0]

    def find_repo(self, request: web.Request, write: bool = False, push: bool = False) -> FakeRepo:
        """The repository in the path, with GitHub's visibility and permission answers."""
        key = f"{request.match_info['owner']}/{request.match_info['repo']}".lower()
        token = self.caller(request)
        with self._lock:
            repo = self.repos.get(key)
        if repo is None or (repo.private and token is None):
            raise ApiError(404, "Not Found")
        if write and token is None:
            raise ApiError(401, "Requires authentication")
        if push and not (token and token.push):
            raise ApiError(403, "Resource not accessible by personal access token")
        return repo

    def api(self, repo: FakeRepo, suffix: str = "") -> str:
        return f"{self.url}/repos/{repo.full_name}{suffix}"

    def html(self, repo: FakeRepo, suffix: str = "") -> str:
        return f"{self.url}/{repo.full_name}{suffix}"

    def user_json(self, login: str, user_id: int = 1) -> dict[str, Any]:
        return {"login": login, "id": user_id, "type": "User", "url": f"{self.url}/users/{login}",
                "html_url": f"{self.url}/{login}"}


async def read_json(request: web.Request) -> dict[str, Any]:
    try:
        data = json.loads(await request.read() or b"{}")
    except ValueError as exc:
        raise ApiError(400, "Problems parsing JSON") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "Problems parsing JSON")
    return data


def paginate(request: web.Request, items: list[dict[str, Any]]) -> web.Response:
    """GitHub-style pagination: per_page/page query and a Link header."""
    per_page = min(100, max(1, int(request.query.get("per_page", "30"))))
    page = max(1, int(request.query.get("page", "1")))
    last = max(1, -(-len(items) // per_page))
    response = web.json_response(items[(page - 1) * per_page: page * per_page])
    if page < last:
        base = str(request.url.with_query({**request.query, "per_page": per_page}))
        links = [f'<{_page_url(base, page + 1)}>; rel="next"', f'<{_page_url(base, last)}>; rel="last"']
        response.headers["Link"] = ", ".join(links)
    return response


def _page_url(base: str, page: int) -> str:
    from yarl import URL

    url = URL(base)
    return str(url.with_query({**url.query, "page": page}))
