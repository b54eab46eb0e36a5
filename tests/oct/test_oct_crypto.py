"""Encryption round trips, in Python and against the published JS library (WebCrypto)."""

from __future__ import annotations

import pytest

from agent.oct import codec
from agent.oct.crypto import (
    CryptoError,
    KeyPair,
    MessageCrypto,
    Recipient,
    aes_decrypt,
    aes_encrypt,
    best_compression,
    decompress,
)
from agent.oct.messages import Envelope, parse_envelope
from tests.oct.conftest import shared_key_pair


def test_python_round_trip_with_gzip_and_key_caches():
    keys = shared_key_pair()
    sender = MessageCrypto(keys)
    receiver = MessageCrypto(keys)
    content = {"method": "sync/dataUpdate", "params": [b"\x00" * 5000]}
    me = Recipient("me", keys.public_key_b64, ("gzip",))
    encrypted = sender.encrypt(Envelope("broadcast", content), [me])
    assert encrypted.compression == "gzip" and isinstance(encrypted.content, bytes)
    assert len(encrypted.content) < 1000  # compressed before encryption
    assert receiver.decrypt_content(encrypted) == content
    again = sender.encrypt(Envelope("broadcast", content), [me])
    assert again.keys[0].key == encrypted.keys[0].key  # the encrypted key is cached per peer
    assert again.keys[0].iv != encrypted.keys[0].iv  # but every message has a fresh IV
    assert len(receiver.decrypted_keys) == 1


def test_no_compression_unless_every_recipient_supports_it():
    assert best_compression([["gzip"], ["gzip", "none"]]) == "gzip"
    assert best_compression([["gzip"], ["none"]]) == "none"
    assert best_compression([]) == "none"
    assert best_compression([["br", "gzip"], ["gzip", "br"]]) == "gzip"  # we only speak gzip


def test_wrong_key_and_bad_padding_are_crypto_errors():
    key, iv = b"k" * 32, b"i" * 16  # fixed: a random wrong key gives valid padding 1 time in 256
    cipher = aes_encrypt(b"hello", key, iv)
    assert aes_decrypt(cipher, key, iv) == b"hello"
    with pytest.raises(CryptoError, match="padding"):
        aes_decrypt(cipher, b"w" * 32, iv)
    with pytest.raises(CryptoError, match="length"):
        aes_decrypt(cipher[:-1], key, iv)
    with pytest.raises(CryptoError):
        decompress(b"not gzip", "gzip")


async def test_js_encrypts_python_decrypts(vectors):
    keys = shared_key_pair()
    content = {"method": "chat/message", "params": ["hé", {"$bytes": "0001"}, {"$undefined": True}]}
    for compression in (["gzip"], ["none"]):
        recipient = {"peerId": "py", "publicKey": keys.public_key_b64, "supportedCompression": compression}
        reply = await vectors.call(op="encrypt", kind="notification", content=content, recipients=[recipient])
        envelope = parse_envelope(codec.decode(bytes.fromhex(reply["hex"])))
        assert envelope.compression == compression[0]
        assert MessageCrypto(keys).decrypt_content(envelope) == {
            "method": "chat/message", "params": ["hé", b"\x00\x01", None]}


async def test_python_encrypts_js_decrypts(vectors):
    pair = await vectors.call(op="keypair", timeout=120)
    js = Recipient("js", pair["publicKey"], ("gzip",))
    ours = MessageCrypto(shared_key_pair())
    envelope = ours.encrypt(Envelope("notification", {"method": "editor/open", "params": ["ws/a.py", b"\x01"]},
                                     target="js"), [js])
    reply = await vectors.call(op="decrypt", privateKey=pair["privateKey"], hex=codec.encode(envelope.to_wire()).hex())
    message = reply["message"]
    assert message["content"] == {"method": "editor/open", "params": ["ws/a.py", {"$bytes": "01"}]}
    assert message["metadata"]["compression"]["algorithm"] == "gzip"


def test_key_pair_pkcs8_round_trip():
    keys = shared_key_pair()
    again = KeyPair.from_pkcs8_b64(keys.private_pkcs8_b64())
    assert again.public_key_b64 == keys.public_key_b64
