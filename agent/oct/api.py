"""The OCT server's HTTP API: metadata, login, validation, rooms.

JSON in and out; the user token travels in the `x-oct-jwt` header. Error bodies are often an
Info `{code, params, message}`: its message is what the user sees. Long polls (`/poll/...`) are
held by the server for up to 30 s, so their read timeout is longer than that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import httpx

from agent.oct.errors import (
    IncompatibleVersion,
    LoginFailed,
    OctError,
    ServerUnreachable,
    from_info,
)
from agent.oct.messages import (
    PROTOCOL_VERSION,
    Peer,
    ProtocolError,
    WorkspaceInfo,
    compatible_versions,
    parse_model,
)

POLL_TIMEOUT = 45.0  # the server answers a long poll within 30 s
REQUEST_TIMEOUT = 15.0


@dataclass(frozen=True)
class ServerMeta:
    owner: str
    version: str
    transports: list[str]


@dataclass(frozen=True)
class FormField:
    name: str
    required: bool


@dataclass(frozen=True)
class AuthProvider:
    type: str  # "form" or "web"
    name: str
    endpoint: str
    label: str
    fields: tuple[FormField, ...] = ()


@dataclass(frozen=True)
class LoginStart:
    poll_token: str
    login_url: str | None
    providers: tuple[AuthProvider, ...]


@dataclass(frozen=True)
class JoinStatus:
    """A status while waiting for admission (`failure` ends the join)."""

    code: str
    message: str
    failure: bool = False


@dataclass(frozen=True)
class JoinResult:
    room_id: str
    room_token: str = field(repr=False)
    workspace: WorkspaceInfo
    host: Peer


def _info_message(body: Any) -> tuple[str, str] | None:
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body.get("code") or "Error"), body["message"]
    return None


def _label(raw: Any) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("message"), str):
        return raw["message"]
    return str(raw or "")


def _provider(raw: Any) -> AuthProvider | None:
    if not isinstance(raw, dict) or raw.get("type") not in ("form", "web"):
        return None
    if not isinstance(raw.get("endpoint"), str):
        return None
    fields = tuple(
        FormField(str(f.get("name", "")), bool(f.get("required", False)))
        for f in raw.get("fields") or []
        if isinstance(f, dict)
    )
    return AuthProvider(
        raw["type"], str(raw.get("name", "")), raw["endpoint"], _label(raw.get("label")), fields
    )


class OctApi:
    """One server's HTTP API. `token` is the user's login token once known."""

    def __init__(self, server_url: str, client: httpx.AsyncClient | None = None) -> None:
        self.base = server_url.rstrip("/") + "/"
        self._client = client or httpx.AsyncClient(timeout=REQUEST_TIMEOUT)
        self.token: str | None = None

    def url(self, path: str) -> str:
        return urljoin(self.base, path.lstrip("/"))

    async def close(self) -> None:
        await self._client.aclose()

    async def _post(self, path: str, *, json: Any = None, timeout: float | None = None) -> httpx.Response:
        return await self._send("POST", path, json=json, timeout=timeout)

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"x-oct-jwt": self.token} if self.token else {}
        timeout = kwargs.pop("timeout", None) or REQUEST_TIMEOUT
        try:
            return await self._client.request(
                method, self.url(path), headers=headers, timeout=timeout, **kwargs
            )
        except httpx.TimeoutException:
            raise ServerUnreachable(f"the OCT server at {self.base} did not answer in time") from None
        except httpx.HTTPError as exc:
            raise ServerUnreachable(
                f"cannot reach the OCT server at {self.base}: {type(exc).__name__}"
            ) from None

    @staticmethod
    def _error(response: httpx.Response, what: str) -> OctError:
        try:
            info = _info_message(response.json())
        except ValueError:
            info = None
        if info:
            return from_info(*info)
        text = response.text.strip()[:200]
        detail = f": {text}" if text else ""
        return OctError(f"{what} failed (HTTP {response.status_code}){detail}")

    @staticmethod
    def _json(response: httpx.Response, what: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise OctError(f"{what}: the server sent something that is not JSON") from None

    async def meta(self) -> ServerMeta:
        response = await self._send("GET", "api/meta")
        if response.status_code != 200:
            raise ServerUnreachable(
                f"{self.base} does not look like an OCT server (GET /api/meta: HTTP {response.status_code})"
            )
        body = self._json(response, "server metadata")
        if not isinstance(body, dict) or not isinstance(body.get("version"), str):
            raise ServerUnreachable(f"{self.base} sent invalid OCT metadata")
        return ServerMeta(str(body.get("owner", "")), body["version"], list(body.get("transports") or []))

    async def ensure_compatible(self) -> ServerMeta:
        meta = await self.meta()
        if not compatible_versions(meta.version):
            raise IncompatibleVersion(
                f"incompatible protocol versions: this client speaks {PROTOCOL_VERSION}, "
                f"the server {meta.version}"
            )
        if "socket.io" not in meta.transports:
            raise IncompatibleVersion(
                f"the server offers no transport this client speaks ({', '.join(meta.transports)})"
            )
        return meta

    async def validate(self) -> bool:
        if not self.token:
            return False
        try:
            response = await self._post("api/login/validate")
            body = response.json()
        except (OctError, ValueError):
            return False
        return isinstance(body, dict) and body.get("valid") is True

    async def login_start(self) -> LoginStart:
        response = await self._post("api/login/initial")
        if response.status_code != 200:
            raise LoginFailed(f"the server refused to start a login (HTTP {response.status_code})")
        body = self._json(response, "login")
        if not isinstance(body, dict) or not isinstance(body.get("pollToken"), str):
            raise LoginFailed("the server's login answer has no poll token")
        auth = body.get("auth") if isinstance(body.get("auth"), dict) else {}
        page = auth.get("loginPageUrl")
        providers = tuple(p for p in map(_provider, auth.get("providers") or []) if p)
        return LoginStart(
            body["pollToken"], self.url(page) if isinstance(page, str) and page else None, providers
        )

    async def form_login(self, provider: AuthProvider, poll_token: str, values: dict[str, str]) -> None:
        body = {"token": poll_token, **values}
        response = await self._post(provider.endpoint, json=body)
        if response.status_code >= 300:
            raise self._error(response, f"login with {provider.label or provider.name}")

    async def poll_login(self, poll_token: str, deadline: float = 300.0) -> str:
        """Wait for the login to complete and return the user token."""
        loop = asyncio.get_running_loop()
        end = loop.time() + deadline
        while loop.time() < end:
            response = await self._post(f"api/login/poll/{poll_token}", timeout=POLL_TIMEOUT)
            if response.status_code >= 300:
                raise self._error(response, "login")
            if response.status_code == 200:
                try:
                    body = response.json()
                except ValueError:
                    body = None
                if isinstance(body, dict) and isinstance(body.get("loginToken"), str):
                    return body["loginToken"]
        raise LoginFailed("the login was not completed in time")

    async def create_room(self) -> tuple[str, str]:
        response = await self._post("api/session/create")
        if response.status_code != 200:
            raise self._error(response, "creating a room")
        body = self._json(response, "create room")
        if not isinstance(body, dict) or not isinstance(body.get("roomToken"), str):
            raise OctError("invalid create-room answer")
        return str(body["roomId"]), body["roomToken"]

    async def join_room(self, room_id: str, on_status: Callable[[JoinStatus], None]) -> JoinResult:
        """Ask to join and poll until admitted; raises for every failure status."""
        response = await self._post(f"api/session/join/{room_id}")
        if response.status_code != 200:
            raise self._error(response, f"joining room {room_id}")
        body = self._json(response, "join")
        if not isinstance(body, dict) or not isinstance(body.get("pollToken"), str):
            raise OctError("invalid join answer (no poll token)")
        return await self._poll_join(body["pollToken"], on_status)

    async def _poll_join(self, poll_token: str, on_status: Callable[[JoinStatus], None]) -> JoinResult:
        while True:
            response = await self._post(f"api/session/poll/{poll_token}", timeout=POLL_TIMEOUT)
            if response.status_code == 204:
                continue
            if response.status_code != 200:
                raise self._error(response, "waiting to join")
            body = self._json(response, "join poll")
            if isinstance(body, dict) and isinstance(body.get("roomToken"), str):
                return self._join_result(body)
            info = _info_message(body)
            if info is None:
                raise OctError("invalid answer while waiting to join")
            if isinstance(body, dict) and body.get("failure") is True:
                raise from_info(*info)
            on_status(JoinStatus(info[0], info[1]))

    @staticmethod
    def _join_result(body: dict[str, Any]) -> JoinResult:
        try:
            return JoinResult(
                room_id=str(body.get("roomId", "")),
                room_token=body["roomToken"],
                workspace=parse_model(WorkspaceInfo, body.get("workspace") or {}, "workspace"),
                host=parse_model(Peer, body.get("host"), "host peer"),
            )
        except ProtocolError as exc:
            raise OctError(f"invalid answer from the server on joining: {exc}") from None
