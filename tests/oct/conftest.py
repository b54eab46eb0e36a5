"""Fixtures for the OCT tests: a test server on loopback, Node peers, and a joined room client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agent.oct.client import RoomClient, RoomOptions
from agent.oct.crypto import KeyPair
from agent.oct.login import TokenStore
from tests.oct.nodeproc import NodeHost, NodeProcess
from tests.oct.server import OctTestServer, ServerConfig

_KEYS: list[KeyPair] = []


def shared_key_pair() -> KeyPair:
    """One RSA-4096 key pair shared by the tests of a session (generation takes a second)."""
    if not _KEYS:
        _KEYS.append(KeyPair.generate())
    return _KEYS[0]


def ready_keys() -> asyncio.Future[KeyPair]:
    future: asyncio.Future[KeyPair] = asyncio.get_running_loop().create_future()
    future.set_result(shared_key_pair())
    return future


@pytest.fixture
def server_config() -> ServerConfig:
    return ServerConfig()


@pytest.fixture
async def oct_server(server_config: ServerConfig) -> AsyncIterator[OctTestServer]:
    server = OctTestServer(server_config)
    await server.start()
    yield server
    await server.stop()
    print("test server trace (shown when a test fails):", *server.relay.trace, sep="\n  ")


@pytest.fixture
async def node_host() -> AsyncIterator[NodeHost]:
    host = NodeHost()
    await host.start()
    yield host
    await host.stop()
    print("node host events (shown when a test fails):", *host.seen[-50:], "stderr:", host.stderr(), sep="\n  ")


@pytest.fixture
async def vectors() -> AsyncIterator[NodeProcess]:
    proc = NodeProcess("vectors.mjs")
    await proc.start()
    yield proc
    await proc.stop()


@pytest.fixture
def token_store(tmp_path: Path) -> TokenStore:
    return TokenStore(tmp_path / "tokens.json")


@pytest.fixture
def make_client(token_store: TokenStore) -> Callable[..., RoomClient]:
    def make(server: str, room_id: str, **options: object) -> RoomClient:
        opts = RoomOptions(room_id=room_id, server=server, token_store=token_store, **options)  # type: ignore[arg-type]
        client = RoomClient(opts, key_pair=ready_keys())
        join, leave = client.join, client.leave

        async def timed_join() -> None:  # a hang shows up as a traceback of where it hung
            await asyncio.wait_for(join(), 90)

        async def timed_leave() -> None:
            await asyncio.wait_for(leave(), 30)

        client.join, client.leave = timed_join, timed_leave  # type: ignore[method-assign]
        return client

    return make
