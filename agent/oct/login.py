"""Logging in to an OCT server, and the login-token cache.

A form provider (the "Unverified" simple login) logs in directly with the name and email; a web
provider (OAuth) needs a browser: we report the login URL, try to open it, and poll. The token is
cached per server and identity in the user config dir (file mode 0600) and reused after the
server confirms it with `/api/login/validate`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent import paths
from agent.oct.api import AuthProvider, LoginStart, OctApi
from agent.oct.errors import LoginFailed
from agent.secrets import register

TOKEN_FILE = "oct-tokens.json"


def default_token_path() -> Path:
    return paths.config_dir() / TOKEN_FILE


@dataclass(frozen=True)
class Identity:
    name: str
    email: str | None = None

    def cache_key(self, server: str) -> str:
        return f"{server.rstrip('/')}|{self.name}|{self.email or ''}"


class TokenStore:
    """Login tokens by server and identity, in a JSON file only the user can read."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_token_path()

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def get(self, key: str) -> str | None:
        return self._load().get(key)

    def _write(self, data: dict[str, str]) -> None:
        paths.private_dir(self.path.parent)  # tokens: 0700 folder, 0600 file
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
        os.chmod(tmp, 0o600)  # O_CREAT's mode does not apply when the file already existed
        os.replace(tmp, self.path)

    def put(self, key: str, token: str) -> None:
        data = self._load()
        data[key] = token
        self._write(data)

    def forget(self, key: str) -> None:
        data = self._load()
        if data.pop(key, None) is not None:
            self._write(data)


@dataclass(frozen=True)
class LoginPrompt:
    """A web login the user must complete in a browser."""

    url: str
    provider: str


Reporter = Callable[[str], None]
BrowserOpener = Callable[[str], bool]


def _form_values(provider: AuthProvider, identity: Identity) -> dict[str, str] | None:
    """Values for the form's fields from our identity (None when a required field is unknown)."""
    known = {"user": identity.name, "name": identity.name, "username": identity.name}
    if identity.email:
        known["email"] = identity.email
    values: dict[str, str] = {}
    for form_field in provider.fields:
        if form_field.name in known:
            values[form_field.name] = known[form_field.name]
        elif form_field.required:
            return None
    if not provider.fields:
        values = {"user": identity.name, **({"email": identity.email} if identity.email else {})}
    return values


async def login(
    api: OctApi,
    identity: Identity,
    store: TokenStore,
    report: Reporter,
    on_web_login: Callable[[LoginPrompt], None],
) -> str:
    """A valid user token for api's server (cached, form login or web login)."""
    key = identity.cache_key(api.base)
    cached = store.get(key)
    if cached:
        register(cached)  # tokens never reach logs, events or session files
        api.token = cached
        if await api.validate():
            report("using the saved login")
            return cached
        store.forget(key)
    api.token = None
    report("logging in")
    start = await api.login_start()
    await _run_provider(api, start, identity, on_web_login)
    token = await api.poll_login(start.poll_token)
    register(token)
    api.token = token
    store.put(key, token)
    report("logged in")
    return token


async def _run_provider(
    api: OctApi, start: LoginStart, identity: Identity, on_web_login: Callable[[LoginPrompt], None]
) -> None:
    for provider in start.providers:
        if provider.type == "form":
            values = _form_values(provider, identity)
            if values is not None:
                await api.form_login(provider, start.poll_token, values)
                return
    web = [p for p in start.providers if p.type == "web"]
    if not start.login_url and not web:
        raise LoginFailed("the server offers no login method this client can use")
    url = start.login_url or api.url(web[0].endpoint)
    names = ", ".join(p.label or p.name for p in web) or "the server's login page"
    on_web_login(LoginPrompt(url, names))
