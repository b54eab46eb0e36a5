"""Staying in a room: reconnects, room closing, permissions, other guests, chat and the host's files."""

from __future__ import annotations

import asyncio

import pytest

from agent.oct.errors import RequestFailed
from tests.oct.proxy import CuttableProxy
from tests.oct.server import ServerConfig

FILES = {"ws/main.py": "a = 1\n", "ws/lib/util.py": "def f():\n    pass\n"}


async def wait_for(predicate, timeout: float = 45.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


@pytest.fixture
async def proxy(oct_server):
    proxy = CuttableProxy(int(oct_server.url.rsplit(":", 1)[1].strip("/")))
    await proxy.start()
    yield proxy
    await proxy.stop()


async def joined(node_host, make_client, server_url: str, via: str | None = None, **options):
    room = await node_host.create(server_url, files=FILES, **options)
    node_host.send(cmd="open", path="ws/main.py")
    client = make_client(via or server_url, room)
    await client.join()
    await wait_for(lambda: client.docs.read("ws/main.py") == "a = 1\n")
    return client


async def test_network_drop_reconnects_and_loses_nothing(oct_server, node_host, make_client, proxy):
    client = await joined(node_host, make_client, oct_server.url, via=f"http://127.0.0.1:{proxy.port}/")
    phases: list[str] = []
    client.listeners.append(lambda what, detail: phases.append(detail) if what == "state" else None)
    proxy.refusing = True
    proxy.cut()
    await wait_for(lambda: client.status.phase == "reconnecting")
    node_host.send(cmd="insert", path="ws/main.py", at="end", text="b = 2\n")  # buffered by the server
    client.docs.text("ws/main.py").insert(0, "# agent\n")  # queued by our transport
    await asyncio.sleep(0.5)
    proxy.refusing = False
    await wait_for(lambda: client.status.phase == "joined")
    expected = "# agent\na = 1\nb = 2\n"
    await wait_for(lambda: client.docs.read("ws/main.py") == expected)
    assert await node_host.wait_text("ws/main.py", equals=expected) == expected
    assert phases[:2] == ["reconnecting", "joined"]
    assert not any(e.get("event") == "peer_left" for e in node_host.seen)  # the server kept us
    await client.leave()


@pytest.mark.parametrize("server_config", [ServerConfig(grace=60)])
async def test_connection_that_never_comes_back_closes_the_session(oct_server, node_host, make_client, proxy):
    room = await node_host.create(oct_server.url)
    client = make_client(f"http://127.0.0.1:{proxy.port}/", room, grace=1.0)
    await client.join()
    proxy.refusing = True
    proxy.cut()
    await asyncio.wait_for(client.closed.wait(), 15)
    assert client.status.phase == "closed"
    assert "lost" in (client.status.close_reason or "")
    await client.leave()


async def test_host_closing_the_room_ends_the_session(oct_server, node_host, make_client):
    client = await joined(node_host, make_client, oct_server.url)
    node_host.send(cmd="close")
    await asyncio.wait_for(client.closed.wait(), 15)
    assert client.status.close_reason == "the host closed the room"
    await client.leave()


async def test_permissions_guests_and_chat(oct_server, node_host, make_client):
    client = await joined(node_host, make_client, oct_server.url, readonly=True)
    assert client.status.readonly is True
    node_host.send(cmd="permissions", readonly=False)
    await wait_for(lambda: client.status.readonly is False)

    events: list[tuple[str, object]] = []
    client.listeners.append(lambda what, detail: events.append((what, detail)))
    bob = make_client(oct_server.url, node_host.room_id, name="bob")
    await bob.join()
    await wait_for(lambda: any(p.name == "bob" for p in client.status.peers.values()))
    assert bob.status.peers and next(iter(bob.status.peers.values())).name == "agent"  # from peer/init
    bob_status = next(p for p in client.status.peers.values() if p.name == "bob")
    assert bob_status.colour.startswith("#")

    heard: list[tuple[str, str, bool]] = []
    client.chat_listeners.append(lambda origin, text, direct: heard.append((origin, text, direct)))
    node_host.send(cmd="chat", text="hello @agent")
    await wait_for(lambda: heard)
    assert heard[0][1:] == ("hello @agent", False) and heard[0][0] == client.status.host.id
    client.send_chat("hi host")
    chat = await node_host.expect("chat")
    assert chat["text"] == "hi host"

    await bob.leave()
    await wait_for(lambda: not client.status.peers)
    assert [d.name for w, d in events if w == "peer_left"] == ["bob"]
    assert [d.name for w, d in events if w == "peer_joined"] == ["bob"]
    await client.leave()


async def test_the_hosts_files(oct_server, node_host, make_client):
    client = await joined(node_host, make_client, oct_server.url)
    assert await client.read_file("ws/lib/util.py") == b"def f():\n    pass\n"
    assert await client.read_dir("ws") == {"main.py": 1, "lib": 2}
    assert (await client.stat("ws/lib")).type == 2
    with pytest.raises(RequestFailed, match="no such file"):
        await client.read_file("ws/missing.py")
    await client.write_file("ws/new.txt", b"new\n")
    assert (await node_host.expect("write_file"))["path"] == "ws/new.txt"
    await client.leave()


async def test_unencrypted_peer_messages_are_dropped_by_the_server(oct_server, node_host, make_client):
    from agent.oct import codec
    from agent.oct.messages import Envelope

    client = await joined(node_host, make_client, oct_server.url)
    plain = Envelope("broadcast", {"method": "chat/message", "params": ["sneaky"]})
    client.transport.write(codec.encode(plain.to_wire()))
    client.send_chat("after")
    chat = await node_host.expect("chat")
    assert chat["text"] == "after"
    assert any("unencrypted broadcast" in reason for reason in oct_server.relay.dropped)
    await client.leave()


async def test_server_ending_our_session_closes_it_at_once(oct_server, node_host, make_client):
    client = await joined(node_host, make_client, oct_server.url)
    ours = next(p for p in oct_server.relay.by_jwt.values() if p.user.get("name") == "agent")
    await oct_server.relay.dispose(ours)
    await asyncio.wait_for(client.closed.wait(), 5)  # no 30 s wait for a reconnect that cannot work
    assert client.lost and "closed by the server" in client.status.close_reason
    await client.leave()
