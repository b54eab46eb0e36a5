"""msgpack compatibility with msgpackr, message framing, and a decoder fed garbage."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.oct import codec
from agent.oct.connection import OctConnection
from agent.oct.crypto import MessageCrypto
from agent.oct.messages import Envelope, ProtocolError, compatible_versions, parse_call, parse_envelope
from tests.oct.conftest import shared_key_pair


def test_undefined_is_ext0_and_decodes_as_absent():
    assert codec.encode(codec.UNDEFINED) == bytes.fromhex("d40000")
    assert codec.decode(bytes.fromhex("d40000")) is None
    # {a: undefined, b: 1} as msgpackr writes it (map16), and [undefined, null]
    assert codec.decode(bytes.fromhex("de0002a161d40000a16201")) == {"b": 1}
    assert codec.decode(bytes.fromhex("92d40000c0")) == [None, None]


def test_numbers_like_msgpackr():
    assert codec.encode(1.5) == bytes.fromhex("cb3ff8000000000000")
    assert codec.encode(2**32) == bytes.fromhex("cb41f0000000000000")  # float64, not uint64
    assert codec.encode(-(2**33)) == bytes.fromhex("cbc200000000000000")
    assert codec.decode(codec.encode(7)) == 7
    assert codec.encode(True) == b"\xc3"


def test_bytes_are_bin_and_strings_str():
    assert codec.encode(b"\x01\x02") == bytes.fromhex("c4020102")
    assert codec.decode(codec.encode({"s": "é", "b": b"\x00"})) == {"s": "é", "b": b"\x00"}


async def test_values_round_trip_through_the_js_library(vectors):
    value = {"n": 1, "f": 0.25, "big": 2**40, "s": "x", "bytes": {"$bytes": "00ff"}, "u": {"$undefined": True},
             "list": [1, {"$undefined": True}, None]}
    packed = await vectors.call(op="pack", value=value)
    decoded = codec.decode(bytes.fromhex(packed["hex"]))
    assert decoded == {"n": 1, "f": 0.25, "big": 2**40, "s": "x", "bytes": b"\x00\xff", "list": [1, None, None]}
    ours = codec.encode({"big": 2**40, "bytes": b"\x00\xff", "u": codec.UNDEFINED, "neg": -5})
    seen = await vectors.call(op="unpack", hex=ours.hex())
    assert seen["value"] == {"big": 2**40, "bytes": {"$bytes": "00ff"}, "u": {"$undefined": True}, "neg": -5}


def test_envelope_round_trip():
    envelope = Envelope("request", {"method": "fileSystem/stat", "params": ["ws/a"]}, id=3, target="p1")
    parsed = parse_envelope(codec.decode(codec.encode(envelope.to_wire())))
    assert (parsed.kind, parsed.id, parsed.origin, parsed.target) == ("request", 3, "", "p1")
    assert parse_call(parsed.content).params == ["ws/a"]


@pytest.mark.parametrize("raw", [
    None, [], {"kind": "request"}, {"version": "0.3.1", "kind": "nope", "metadata": {}},
    {"version": "0.3.1", "kind": "request", "metadata": {"encryption": {"keys": []}, "compression": {"algorithm": "none"}}},
    {"version": "0.3.1", "kind": "broadcast", "metadata": {"encryption": {"keys": [1]}, "compression": {"algorithm": "none"}}},
])
def test_malformed_envelopes_are_protocol_errors(raw):
    with pytest.raises(ProtocolError):
        parse_envelope(raw)


def test_version_compatibility():
    assert compatible_versions("0.3.0") and compatible_versions("0.3.9")
    assert not compatible_versions("0.4.0") and not compatible_versions("1.3.1")
    assert not compatible_versions("garbage")


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_decoder_never_raises_anything_but_decode_error(data):
    try:
        codec.decode(data)
    except codec.DecodeError:
        pass


_wire = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8) | st.binary(max_size=16),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(
        ["version", "kind", "metadata", "content", "id", "origin", "target", "keys", "encryption",
         "compression", "algorithm", "method", "params", "key", "iv"]), children, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=200), _wire.map(lambda v: codec.encode(v))))
def test_connection_skips_garbage_without_crashing(data):
    sent: list[bytes] = []
    connection = OctConnection(MessageCrypto(shared_key_pair()), sent.append)

    async def feed() -> None:
        await connection.receive(data)
        await connection.close()

    asyncio.run(feed())
    assert connection.stats.received == 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(["request", "response", "response-error", "notification", "broadcast", "error"]),
    content=st.binary(max_size=64),
    key=st.text(alphabet="ABCDEFabcdef0123456789+/=", max_size=40),
    iv=st.text(alphabet="ABCDEFabcdef0123456789+/=", max_size=30),
    nkeys=st.integers(0, 2),
    compression=st.sampled_from(["none", "gzip", "br"]),
)
def test_undecryptable_messages_are_skipped(kind, content, key, iv, nkeys, compression):
    wire = {"version": "0.3.1", "kind": kind, "id": 1, "origin": "p", "target": "me", "content": content,
            "metadata": {"encryption": {"keys": [{"target": "me", "key": key, "iv": iv}] * nkeys},
                         "compression": {"algorithm": compression}}}
    connection = OctConnection(MessageCrypto(shared_key_pair()), lambda data: None)
    calls: list[object] = []
    connection.on("chat/message", lambda *args: calls.append(args))

    async def feed() -> None:
        await connection.receive(codec.encode(wire))
        await connection.close()

    asyncio.run(feed())
    assert calls == []
    assert connection.stats.skipped == (0 if kind in ("response", "response-error") else 1)
