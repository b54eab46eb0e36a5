"""Decoding and encoding text files so that a round trip keeps their bytes' conventions.

Tools see text with "\n" line ends; on write the file's encoding (UTF-8, UTF-8 with BOM, UTF-16,
Latin-1 fallback) and newline style ("\n" or "\r\n") come back.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

SNIFF = 8192


class BinaryFileError(ValueError):
    pass


@dataclass(frozen=True)
class TextFormat:
    encoding: str = "utf-8"
    newline: str = "\n"


def is_binary(data: bytes) -> bool:
    head = data[:SNIFF]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head


def decode(data: bytes) -> tuple[str, TextFormat]:
    """Text with "\n" line ends, and the format to write it back in."""
    if is_binary(data):
        raise BinaryFileError("binary file")
    if data.startswith(codecs.BOM_UTF8):
        encoding, text = "utf-8-sig", data.decode("utf-8-sig")
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding, text = "utf-16", data.decode("utf-16")
    else:
        try:
            encoding, text = "utf-8", data.decode("utf-8")
        except UnicodeDecodeError:
            encoding, text = "latin-1", data.decode("latin-1")
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"
    if crlf:
        text = text.replace("\r\n", "\n")
    return text, TextFormat(encoding, newline)


def encode(text: str, fmt: TextFormat) -> bytes:
    if fmt.newline != "\n":
        text = text.replace("\n", fmt.newline)
    return text.encode(fmt.encoding)
