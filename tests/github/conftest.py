"""Fixtures for GitHub tests: the fake server, clients pointed at it, and a network guard.

Every test here runs with name resolution limited to loopback, and with the API URL variables
pointing at a closed loopback port, so no code path can reach api.github.com or github.com.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from agent.github.auth import NO_TOKEN, TokenSource
from agent.github.client import ClientSettings, GitHubClient
from tests.github.fake_server import FakeGitHub

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
TOKEN = "ghp_testtokenALICE0123456789abcdef"
READONLY_TOKEN = "ghp_testtokenBOB0123456789abcdefgh"
CLOSED_PORT_URL = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def no_public_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", CLOSED_PORT_URL)
    for name in ("GITHUB_API_URL", "GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    real = socket.getaddrinfo

    def loopback_only(host: object, *args: object, **kwargs: object) -> object:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in LOOPBACK:
            raise OSError(f"test tried to resolve {name}; only loopback is allowed")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)


@pytest.fixture
def gh_server(tmp_path: Path) -> Iterator[FakeGitHub]:
    server = FakeGitHub(tmp_path / "fake-github")
    server.add_token(TOKEN, "alice")
    server.add_token(READONLY_TOKEN, "bob", push=False)
    with server:
        yield server


@pytest.fixture
def make_client(gh_server: FakeGitHub) -> Iterator[Callable[..., GitHubClient]]:
    clients: list[GitHubClient] = []

    def make(token: str | None = TOKEN, **settings: object) -> GitHubClient:
        source = TokenSource(SecretStr(token), "GITHUB_TOKEN") if token else NO_TOKEN
        options: dict[str, object] = {"write_interval": 0.0, **settings}
        client = GitHubClient(ClientSettings(api_url=gh_server.url, token=source, **options))  # type: ignore[arg-type]
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
