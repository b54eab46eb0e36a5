"""Message encryption exactly as the OCT JS client does it (WebCrypto semantics).

content → msgpack → compression (gzip when every recipient supports it) → AES-256-CBC with PKCS#7
padding under the sender's symmetric key and a fresh IV → for each recipient the raw symmetric key
RSA-OAEP(SHA-256, MGF1-SHA-256) encrypted with its SPKI public key. Senders cache the encrypted
key per peer and receivers the decrypted key per `key` string, because RSA is the slow part.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes, padding, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.padding import MGF1, OAEP
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from agent.oct import codec
from agent.oct.messages import ContentKey, Envelope

RSA_BITS = 4096
MAX_DECOMPRESSED = 256 * 1024 * 1024  # a peer cannot make us inflate more than this
CACHE_SLACK = 50  # like the JS client: clear a cache once it outgrows peers + 50
SUPPORTED_COMPRESSION = ("gzip",)


class CryptoError(ValueError):
    """A message we cannot decrypt or a key we cannot use."""


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64decode(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, TypeError) as exc:
        raise CryptoError(f"invalid base64: {exc}") from None


def _oaep() -> OAEP:
    return OAEP(mgf=MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None)


@dataclass(frozen=True)
class KeyPair:
    private_key: rsa.RSAPrivateKey
    public_key_b64: str  # SPKI DER, base64: the `x-oct-public-key` header value

    @classmethod
    def generate(cls, bits: int = RSA_BITS) -> KeyPair:
        """Blocking (about a second for 4096 bits): run it in a thread, see `start_key_pair`."""
        private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
        spki = private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return cls(private, b64encode(spki))

    def private_pkcs8_b64(self) -> str:
        der = self.private_key.private_bytes(
            serialization.Encoding.DER,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return b64encode(der)

    @classmethod
    def from_pkcs8_b64(cls, text: str) -> KeyPair:
        private = serialization.load_der_private_key(b64decode(text), password=None)
        if not isinstance(private, rsa.RSAPrivateKey):
            raise CryptoError("not an RSA private key")
        spki = private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return cls(private, b64encode(spki))


def start_key_pair(bits: int = RSA_BITS) -> asyncio.Future[KeyPair]:
    """Start generating a key pair in a worker thread; await the future when it is needed."""
    loop = asyncio.get_running_loop()
    return loop.run_in_executor(None, KeyPair.generate, bits)


def rsa_encrypt(data: bytes, public_key_b64: str) -> bytes:
    try:
        key = serialization.load_der_public_key(b64decode(public_key_b64))
    except ValueError as exc:
        raise CryptoError(f"unusable public key: {exc}") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise CryptoError("public key is not RSA")
    return key.encrypt(data, _oaep())


def rsa_decrypt(data: bytes, private_key: rsa.RSAPrivateKey) -> bytes:
    try:
        return private_key.decrypt(data, _oaep())
    except ValueError as exc:
        raise CryptoError("cannot decrypt the message key (not meant for us?)") from exc


def aes_encrypt(data: bytes, key: bytes, iv: bytes) -> bytes:
    padder = padding.PKCS7(128).padder()
    padded = padder.update(data) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(padded) + encryptor.finalize()


def aes_decrypt(data: bytes, key: bytes, iv: bytes) -> bytes:
    if len(key) not in (16, 24, 32) or len(iv) != 16 or not data or len(data) % 16:
        raise CryptoError("bad AES key, IV or ciphertext length")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    padded = decryptor.update(data) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError:
        raise CryptoError("bad padding (wrong key?)") from None


def compress(data: bytes, algorithm: str) -> bytes:
    if algorithm == "none":
        return data
    if algorithm == "gzip":
        return gzip.compress(data, compresslevel=6, mtime=0)
    raise CryptoError(f"unsupported compression {algorithm!r}")


def decompress(data: bytes, algorithm: str) -> bytes:
    if algorithm == "none":
        return data
    if algorithm != "gzip":
        raise CryptoError(f"unsupported compression {algorithm!r}")
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, MAX_DECOMPRESSED)
    except zlib.error as exc:
        raise CryptoError(f"bad gzip data: {exc}") from None
    if inflater.unconsumed_tail:
        raise CryptoError("decompressed message is too large")
    return out


def best_compression(supported: Sequence[Sequence[str]]) -> str:
    """The algorithm every recipient supports, ranked by their preference order (JS bestFit)."""
    if not supported:
        return "none"
    ranking = {alg: i for i, alg in enumerate(supported[0]) if alg != "none"}
    for lst in supported[1:]:
        found = {alg: j for j, alg in enumerate(lst) if alg != "none" and alg in ranking}
        ranking = {alg: ranking[alg] + j for alg, j in found.items()}
        if not ranking:
            break
    usable = {alg: score for alg, score in ranking.items() if alg in SUPPORTED_COMPRESSION}
    return min(usable, key=lambda a: usable[a]) if usable else "none"


@dataclass(frozen=True)
class Recipient:
    peer_id: str
    public_key: str
    compression: tuple[str, ...] = ("none",)


@dataclass
class MessageCrypto:
    """Our key pair, our symmetric key and the two key caches."""

    key_pair: KeyPair
    sym_key: bytes = field(default_factory=lambda: os.urandom(32))
    encrypted_keys: dict[str, str] = field(default_factory=dict)  # peer id -> b64
    decrypted_keys: dict[str, bytes] = field(default_factory=dict)  # b64 key -> raw

    def trim_caches(self, peer_count: int) -> None:
        limit = peer_count + CACHE_SLACK
        if len(self.encrypted_keys) > limit:
            self.encrypted_keys.clear()
        if len(self.decrypted_keys) > limit:
            self.decrypted_keys.clear()

    def _key_for(self, recipient: Recipient) -> str:
        cached = self.encrypted_keys.get(recipient.peer_id)
        if cached is None:
            cached = b64encode(rsa_encrypt(self.sym_key, recipient.public_key))
            self.encrypted_keys[recipient.peer_id] = cached
        return cached

    def encrypt(self, envelope: Envelope, recipients: Sequence[Recipient]) -> Envelope:
        """A copy of envelope whose content is ciphertext readable by each recipient."""
        if not recipients:
            raise CryptoError("no recipients to encrypt for")
        algorithm = best_compression([r.compression for r in recipients])
        plain = compress(codec.encode(envelope.content), algorithm)
        iv = os.urandom(16)
        cipher = aes_encrypt(plain, self.sym_key, iv)
        iv_b64 = b64encode(iv)
        keys = [ContentKey(r.peer_id, self._key_for(r), iv_b64) for r in recipients]
        return Envelope(
            kind=envelope.kind,
            content=cipher,
            version=envelope.version,
            keys=keys,
            compression=algorithm,
            id=envelope.id,
            origin=envelope.origin,
            target=envelope.target,
        )

    def decrypt_content(self, envelope: Envelope) -> object:
        """The plain content of an encrypted envelope (CryptoError / DecodeError on failure)."""
        if len(envelope.keys) != 1:
            raise CryptoError(f"expected exactly one key, got {len(envelope.keys)}")
        entry = envelope.keys[0]
        raw_key = self.decrypted_keys.get(entry.key)
        if raw_key is None:
            raw_key = rsa_decrypt(b64decode(entry.key), self.key_pair.private_key)
            self.decrypted_keys[entry.key] = raw_key
        plain = aes_decrypt(bytes(envelope.content), raw_key, b64decode(entry.iv))
        return codec.decode(decompress(plain, envelope.compression))
