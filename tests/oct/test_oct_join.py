"""Joining a room hosted by the published JS client, on the protocol-faithful test server."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from agent.oct.errors import IncompatibleVersion, JoinRejected, JoinTimeout, RoomNotFound, ServerUnreachable
from tests.oct.server import ServerConfig


async def wait_for(predicate, timeout: float = 45.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def test_join_follow_and_sync(oct_server, node_host, make_client):
    room = await node_host.create(oct_server.url, files={"ws/main.py": "print('hi')\n"})
    node_host.send(cmd="open", path="ws/main.py")
    client = make_client(oct_server.url, room, name="agent", email="agent@example.com")
    phases: list[str] = []
    client.listeners.append(lambda what, detail: phases.append(detail) if what == "state" else None)
    await client.join()
    try:
        assert client.status.phase == "joined"
        assert [p for p in dict.fromkeys(phases)] == ["connecting", "logging_in", "waiting_for_host", "joined"]
        assert oct_server.join_requests == [{"name": "agent", "email": "agent@example.com", "authProvider": "Unverified"}]
        assert client.status.host and client.status.host.name == "host"
        assert client.status.folders == ["ws"]
        await wait_for(lambda: client.status.followed == "ws/main.py")
        await wait_for(lambda: client.docs.read("ws/main.py") == "print('hi')\n")
        # our edit reaches the host, the host's reaches us
        client.docs.text("ws/main.py").insert(0, "# top\n")
        await node_host.wait_text("ws/main.py", equals="# top\nprint('hi')\n")
        node_host.send(cmd="insert", path="ws/main.py", at="end", text="x = 1\n")
        await wait_for(lambda: client.docs.read("ws/main.py") == "# top\nprint('hi')\nx = 1\n")
    finally:
        await client.leave()
    left = await node_host.expect("peer_left")
    assert left["peer"]["name"] == "agent"
    assert client.status.phase == "closed"


async def test_saved_login_is_reused(oct_server, node_host, make_client, token_store):
    room = await node_host.create(oct_server.url)
    first = make_client(oct_server.url, room)
    await first.join()
    await first.leave()
    assert len(oct_server.users) == 2  # the host and us
    assert token_store.path.stat().st_mode & 0o777 == 0o600
    second = make_client(oct_server.url, room)
    await second.join()
    await second.leave()
    assert len(oct_server.users) == 2  # validated and reused, no second login


@pytest.mark.parametrize("server_config", [ServerConfig(web_login=True, form_login=False)])
async def test_web_login_reports_url_and_polls(oct_server, node_host, make_client):
    room = await node_host.create(oct_server.url)
    prompts = []

    def browser(prompt):
        """What the user does in the browser: log in with the web provider."""
        prompts.append(prompt)
        token = parse_qs(urlsplit(prompt.url).query)["token"][0]
        asyncio.get_running_loop().create_task(
            httpx.AsyncClient().post(oct_server.url + "api/login/web-confirm", json={"token": token, "name": "ada"})
        )

    client = make_client(oct_server.url, room, on_web_login=browser)
    await client.join()
    await client.leave()
    assert len(prompts) == 1
    assert prompts[0].url.startswith(oct_server.url + "login.html?token=")
    assert prompts[0].provider == "Test Web"
    assert client.status.login_url == prompts[0].url
    assert oct_server.join_requests[-1]["name"] == "ada"


async def test_rejected(oct_server, node_host, make_client):
    room = await node_host.create(oct_server.url, admit=False)
    client = make_client(oct_server.url, room)
    with pytest.raises(JoinRejected, match="rejected"):
        await client.join()
    await client.leave()


@pytest.mark.parametrize("server_config", [ServerConfig(join_timeout=1.0)])
async def test_host_that_never_answers_times_out(oct_server, node_host, make_client):
    room = await node_host.create(oct_server.url, admit="never")
    client = make_client(oct_server.url, room)
    messages: list[str] = []
    client.listeners.append(lambda what, detail: messages.append(client.status.message))
    with pytest.raises(JoinTimeout, match="timed out"):
        await client.join()
    assert "Waiting for host to accept join request" in messages
    await client.leave()


async def test_unknown_room(oct_server, make_client):
    client = make_client(oct_server.url, "no-such-room")
    with pytest.raises(RoomNotFound, match="Room not found"):
        await client.join()
    await client.leave()


async def test_unreachable_server(make_client, unused_tcp_port):
    client = make_client(f"http://127.0.0.1:{unused_tcp_port}/", "room")
    with pytest.raises(ServerUnreachable, match="cannot reach"):
        await client.join()
    await client.leave()


@pytest.mark.parametrize("server_config", [ServerConfig(version="0.4.0")])
async def test_incompatible_version(oct_server, make_client):
    client = make_client(oct_server.url, "room")
    with pytest.raises(IncompatibleVersion, match="0.3.1.*0.4.0"):
        await client.join()
    await client.leave()
