"""PyGithub, called off the event loop, with errors and rate limits turned into plain answers.

PyGithub is synchronous, so every call runs in a worker thread (`asyncio.to_thread`) and the
event loop (and the TUI) never blocks. PyGithub's own retry, which sleeps inside the thread until
a rate limit resets, is replaced: transient 5xx answers to reads are retried by urllib3, and a
rate limit either waits (saying so through `notify`) when the reset is near, or stops with the
reset time. The API address comes from the caller, CODER_TUI_GITHUB_API_URL or GITHUB_API_URL,
and only then defaults to api.github.com.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from agent import __version__
from agent.github.auth import NO_TOKEN, TokenSource, redact
from agent.github.errors import (
    GitHubError,
    NotFound,
    PermissionDenied,
    RateLimited,
    TokenRequired,
)

if TYPE_CHECKING:
    from agent.events import Retrying
    from github import Github
    from github.Repository import Repository

T = TypeVar("T")
Notify = Callable[["Retrying"], None]  # a wait for a rate limit, announced before it starts

DEFAULT_API_URL = "https://api.github.com"
API_URL_ENV = ("CODER_TUI_GITHUB_API_URL", "GITHUB_API_URL")
TOKEN_HINT = (
    "set GITHUB_TOKEN or GH_TOKEN, run `gh auth login`, or put github_token in the user config"
)


def resolve_api_url(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The REST API root: explicit, then the environment, then api.github.com."""
    env = os.environ if env is None else env
    candidates = [explicit] + [env.get(name) for name in API_URL_ENV]
    url = next((c.strip() for c in candidates if c and c.strip()), DEFAULT_API_URL)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GitHubError(f"GitHub API URL {url!r} is not an http(s) address")
    return url.rstrip("/")


@dataclass(frozen=True)
class RateInfo:
    remaining: int
    limit: int
    reset: dt.datetime | None


@dataclass
class ClientSettings:
    api_url: str
    token: TokenSource = NO_TOKEN
    max_rate_wait: float = 60.0  # wait this long at most for a rate-limit reset, else stop
    max_rate_retries: int = 3
    write_interval: float = 1.0  # GitHub asks integrators to leave a second between writes
    timeout: int = 15
    pool_size: int = 8


class GitHubClient:
    """One PyGithub connection; `call` runs a blocking function with error translation."""

    def __init__(self, settings: ClientSettings, notify: Notify | None = None) -> None:
        self.settings = settings
        self.notify = notify
        self._gh: Github | None = None

    @property
    def has_token(self) -> bool:
        return self.settings.token.present

    @property
    def gh(self) -> Github:
        if self._gh is None:
            self._gh = _build_github(self.settings)
        return self._gh

    def rate(self) -> RateInfo | None:
        """The limit as the last answer reported it (no request); None before any answer."""
        if self._gh is None:
            return None
        requester = self._gh.requester
        remaining, limit = requester.rate_limiting
        if limit < 0:
            return None
        stamp = requester.rate_limiting_resettime
        reset = dt.datetime.fromtimestamp(stamp, dt.timezone.utc) if stamp else None
        return RateInfo(remaining, limit, reset)

    def require_token(self, action: str) -> None:
        if not self.has_token:
            raise TokenRequired(f"{action} needs a GitHub token: {TOKEN_HINT}")

    async def call(
        self,
        action: str,
        fn: Callable[[], T],
        *,
        write: bool = False,
        missing: GitHubError | None = None,
    ) -> T:
        """Run fn in a thread; GitHubError on failure (404 raises `missing` when given)."""
        if write:
            self.require_token(action)
        attempt = 0
        while True:
            try:
                return await asyncio.to_thread(fn)
            except Exception as exc:  # noqa: BLE001 - translated below, re-raised otherwise
                error, wait = self._translate(exc, action, missing)
            attempt += 1
            if wait is None or attempt > self.settings.max_rate_retries:
                raise error from None
            self._announce(error, wait, attempt)
            await asyncio.sleep(wait)

    def _announce(self, error: GitHubError, wait: float, attempt: int) -> None:
        """Every wait is announced: nobody should wonder why the agent went quiet."""
        from agent.events import Retrying

        reset = getattr(error, "reset_at", None)
        reset_at = reset.astimezone(dt.timezone.utc).isoformat(timespec="seconds") if reset else None
        if self.notify is not None:
            self.notify(Retrying(why=str(error), attempt=attempt, delay=round(wait, 1), reset_at=reset_at))

    async def repository(self, full_name: str, missing: GitHubError) -> Repository:
        return await self.call(f"reading {full_name}", lambda: self.gh.get_repo(full_name), missing=missing)

    def close(self) -> None:
        if self._gh is not None:
            self._gh.close()
            self._gh = None

    # -- error translation -------------------------------------------------------------------
    def _translate(
        self, exc: Exception, action: str, missing: GitHubError | None
    ) -> tuple[GitHubError, float | None]:
        from github.GithubException import GithubException
        from requests.exceptions import RequestException

        if isinstance(exc, GithubException):
            return self._from_status(exc, action, missing)
        if isinstance(exc, RequestException):
            host = urlsplit(self.settings.api_url).netloc
            return GitHubError(f"cannot reach the GitHub API at {host} while {action} "
                               f"({type(exc).__name__}); check the network and try again"), None
        if isinstance(exc, GitHubError):
            return exc, None
        raise exc

    def _from_status(
        self, exc: Any, action: str, missing: GitHubError | None
    ) -> tuple[GitHubError, float | None]:
        status, message = exc.status, _message(exc.data)
        token = self.settings.token
        if status in (403, 429) and _is_rate_limit(status, message, exc.headers or {}):
            return self._rate_limited(exc.headers or {}, action)
        if status == 401 and message.lower() == "bad credentials":
            return PermissionDenied(f"GitHub rejected the {token.describe()} (401 Bad credentials) "
                                    f"while {action}; check or renew it"), None
        if status == 401:
            return TokenRequired(f"{action} needs a GitHub token: {TOKEN_HINT}"), None
        if status == 403:
            return PermissionDenied(f"GitHub refused {action} (403: {message}); the "
                                    f"{token.describe()} lacks the permission for it"), None
        if status == 404:
            return missing or NotFound(f"{action}: not found on GitHub (404)"), None
        text = redact(f"GitHub answered {status} while {action}: {message}", token)
        if status >= 500:
            text += "; try again later"
        return GitHubError(text), None

    def _rate_limited(self, headers: Mapping[str, str], action: str) -> tuple[GitHubError, float | None]:
        headers = {k.lower(): v for k, v in headers.items()}
        now = time.time()
        if "retry-after" in headers:
            wait = float(headers["retry-after"])
        elif "x-ratelimit-reset" in headers:
            wait = max(1.0, float(headers["x-ratelimit-reset"]) - now + 1)
        else:
            wait = 60.0
        reset = dt.datetime.fromtimestamp(now + wait, dt.timezone.utc)
        clock = reset.astimezone().strftime("%H:%M:%S")
        if wait <= self.settings.max_rate_wait:
            why = f"GitHub rate limit reached while {action}; it resets at {clock}"
            return RateLimited(why, reset), wait
        hint = "" if self.has_token else f" Without a token the limit is 60 requests an hour: {TOKEN_HINT}."
        minutes = max(1, round(wait / 60))
        return RateLimited(f"GitHub API rate limit exhausted while {action}; it resets at {clock} "
                           f"(in about {minutes} min).{hint}", reset), None


def _message(data: Any) -> str:
    if not isinstance(data, dict):
        return str(data or "")
    message = str(data.get("message") or "")
    details = []
    for item in data.get("errors") or []:
        if isinstance(item, dict):
            details.append(str(item.get("message") or f"{item.get('field')} {item.get('code')}"))
        else:
            details.append(str(item))
    return f"{message} ({'; '.join(details)})" if details else message


def _is_rate_limit(status: int, message: str, headers: Mapping[str, str]) -> bool:
    lowered = {k.lower(): v for k, v in headers.items()}
    text = message.lower()
    return (
        status == 429
        or text.startswith("api rate limit exceeded")
        or "secondary rate limit" in text
        or lowered.get("x-ratelimit-remaining") == "0"
    )


def _build_github(settings: ClientSettings) -> Github:
    from github import Auth, Github
    from urllib3.util import Retry

    retry = Retry(
        total=3,
        backoff_factor=0.3,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
        # a Retry-After (rate limits) is ours to honour, not urllib3's sleeping in the thread
        respect_retry_after_header=False,
    )
    secret = settings.token.token
    return Github(
        base_url=settings.api_url,
        auth=Auth.Token(secret.get_secret_value()) if secret is not None else None,
        timeout=settings.timeout,
        user_agent=f"coder-tui/{__version__}",
        per_page=100,
        retry=retry,
        pool_size=settings.pool_size,
        seconds_between_requests=None,
        seconds_between_writes=settings.write_interval or None,
    )
