"""Yjs sync in OCT framing between two Python peers, through the test server's relay rules.

No sockets here: the relay's send function hands each message straight to the receiving peer's
connection (the bytes are the real, encrypted wire messages).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pycrdt import Doc, Text

from agent.oct import codec
from agent.oct.connection import OctConnection
from agent.oct.crypto import MessageCrypto
from agent.oct.documents import STEP1, STEP2, UPDATE, RoomDocuments, frame
from agent.oct.messages import Methods, parse_envelope
from tests.oct.conftest import shared_key_pair
from tests.oct.relay import Relay


class Peer:
    def __init__(self, relay: Relay, sid: str) -> None:
        self.relay, self.sid = relay, sid
        self.sent: list[dict[str, Any]] = []
        self.drop_next = 0  # lose this many of our next messages (a lossy moment)
        self.connection = OctConnection(MessageCrypto(shared_key_pair()), self._write)
        self.docs = RoomDocuments(self.connection)
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._pump = asyncio.create_task(self._run())

    def _write(self, data: bytes) -> None:
        self.sent.append(codec.decode(data))
        if self.drop_next:
            self.drop_next -= 1
            return
        self._queue.put_nowait(data)

    async def _run(self) -> None:
        while True:
            await self.relay.receive(self.sid, await self._queue.get())
            self._queue.task_done()

    async def drain(self) -> None:
        await self._queue.join()


async def room() -> tuple[Peer, Peer, dict[str, Peer]]:
    by_sid: dict[str, Peer] = {}

    async def send(sid: str, data: bytes) -> None:
        await by_sid[sid].connection.receive(data)

    async def close(sid: str) -> None:
        pass

    relay = Relay(send, close, grace=30, request_timeout=5)
    host, guest = Peer(relay, "host-sid"), Peer(relay, "guest-sid")
    by_sid.update({"host-sid": host, "guest-sid": guest})
    key = shared_key_pair().public_key_b64

    def init_guest(origin: str, peer: dict[str, Any]) -> None:  # what a host does for a new guest
        host.connection.notify(Methods.PEER_INIT, peer["id"], {
            "protocol": "0.3.1", "host": relay.by_sid["host-sid"].to_protocol(), "guests": [],
            "permissions": {"readonly": False}, "capabilities": {}, "workspace": {"name": "w", "folders": ["ws"]}})

    host.connection.on(Methods.ROOM_JOINED, init_guest)
    guest.connection.on(Methods.PEER_INIT, lambda origin, data: guest.docs.sync_all())
    await relay.connect("host-sid", "jwt-h", {"room": "r", "user": {"name": "h"}, "host": True}, key, ["gzip"], "t")
    await relay.connect("guest-sid", "jwt-g", {"room": "r", "user": {"name": "g"}}, key, ["gzip"], "t")
    return host, guest, by_sid


async def settle(*peers: Peer) -> None:
    for _ in range(4):
        for peer in peers:
            await peer.drain()
        await asyncio.sleep(0)


def payloads(peer: Peer, method: str) -> list[bytes]:
    """Plain sync payloads a peer sent (decrypted with the shared test key)."""
    crypto = MessageCrypto(shared_key_pair())
    found = []
    for raw in peer.sent:
        if isinstance(raw.get("content"), bytes) and raw["metadata"]["encryption"]["keys"]:
            envelope = parse_envelope(raw)
            envelope.keys = envelope.keys[:1]
            content = crypto.decrypt_content(envelope)
            if content["method"] == method:
                found.append(content["params"][0])
    return found


async def test_sync_both_ways_in_oct_framing():
    host, guest, _ = await room()
    host.docs.text("ws/a.py").insert(0, "hello\n")
    await settle(host, guest)
    assert guest.docs.read("ws/a.py") == "hello\n"  # from the host's update or its step 2
    guest.docs.text("ws/a.py").insert(6, "world\n")
    await settle(host, guest)
    assert host.docs.read("ws/a.py") == "hello\nworld\n"
    sent = payloads(guest, Methods.SYNC_DATA_UPDATE)
    assert [p[0] for p in sent[:2]] == [STEP1, STEP2] and sent[-1][0] == UPDATE
    answers = payloads(host, Methods.SYNC_DATA_NOTIFY)  # step 2 answers go only to the asker
    assert answers and all(p[0] == STEP2 for p in answers)


async def test_a_lost_update_is_recovered_by_the_periodic_resync():
    host, guest, _ = await room()
    await settle(host, guest)
    host.drop_next = 1
    host.docs.text("ws/a.py").insert(0, "lost\n")
    await settle(host, guest)
    assert guest.docs.read("ws/a.py") in (None, "")
    guest.docs.resync()  # what tick() does every 10 s
    await settle(host, guest)
    assert guest.docs.read("ws/a.py") == "lost\n"


async def test_awareness_states_and_queries():
    host, guest, _ = await room()
    host.docs.set_identity("host-peer")
    host.docs.set_selection({"path": "ws/a.py", "textSelections": []})
    await settle(host, guest)
    assert guest.docs.peer_states()["host-peer"]["selection"]["path"] == "ws/a.py"
    host.docs.forget_peer("nobody")
    guest.docs.forget_peer("host-peer")
    assert "host-peer" not in guest.docs.peer_states()
    before = len(payloads(host, Methods.SYNC_AWARENESS_NOTIFY))
    guest.connection.broadcast(Methods.SYNC_AWARENESS_QUERY)  # the host answers the asker directly
    await settle(host, guest)
    assert len(payloads(host, Methods.SYNC_AWARENESS_NOTIFY)) == before + 1
    host.docs.tick()  # nothing due yet
    host.docs._last_renew -= 20  # 15 s later: the host renews its state (a newer clock)
    host.docs.tick()
    await settle(host, guest)
    assert guest.docs.peer_states()["host-peer"]["selection"]["path"] == "ws/a.py"


async def test_garbage_sync_payloads_are_ignored():
    host, guest, _ = await room()
    await settle(host, guest)
    for junk in (b"", b"\x00", b"\x02\x05ab", b"\x07\x00", b"\x02\x03\xff\xff\xff"):
        host.connection.broadcast(Methods.SYNC_DATA_UPDATE, junk)
    host.docs.text("ws/a.py").insert(0, "still fine\n")
    await settle(host, guest)
    assert guest.docs.read("ws/a.py") == "still fine\n"


def test_frame_layout():
    doc = Doc()
    doc.get("t", type=Text).insert(0, "x")
    state = doc.get_state()
    assert frame(STEP1, state) == bytes([0, len(state)]) + state
