"""Small real images for the media tests (a PNG made here, not a fixture file)."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 2, height: int = 2, shade: int = 0) -> bytes:
    """A valid RGB PNG of one colour (`shade` changes its bytes, and so its hash)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes([shade, 128, 255 - shade]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
