"""Decoding and encoding text files so that an edit changes only the edited lines' bytes.

Tools see text with "\n" line ends. A file's encoding (UTF-8, UTF-8 with BOM, UTF-16 LE or BE with
its BOM, Latin-1 fallback) and newline style ("\n" or "\r\n") come back on write. `encode_edit`
goes further for a file that exists: lines the edit did not touch keep their exact bytes, so a file
with mixed line ends is not normalised.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from agent.diffing import line_opcodes

_BOMS = {"utf-8-sig": b"", "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}


class BinaryFileError(ValueError):
    pass


@dataclass(frozen=True)
class TextFormat:
    """How a file's text is stored. "utf-16-le"/"utf-16-be" files start with their BOM."""

    encoding: str = "utf-8"
    newline: str = "\n"


def is_binary(data: bytes) -> bool:
    """A NUL byte anywhere (not just in the first kilobytes) marks a file as binary, except in UTF-16."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in data


def _decode_raw(data: bytes) -> tuple[str, str]:
    """(text with the file's own line ends, encoding)."""
    if is_binary(data):
        raise BinaryFileError("binary file")
    for bom, encoding in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(encoding), encoding
            except UnicodeDecodeError:
                raise BinaryFileError("not valid UTF-16") from None
    encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"  # every byte maps to one character and back


def _newline(raw: str) -> str:
    crlf = raw.count("\r\n")
    return "\r\n" if crlf and crlf >= raw.count("\n") - crlf else "\n"


def decode(data: bytes) -> tuple[str, TextFormat]:
    """Text with "\n" line ends, and the format to write it back in."""
    raw, encoding = _decode_raw(data)
    return raw.replace("\r\n", "\n"), TextFormat(encoding, _newline(raw))


def _to_bytes(text: str, encoding: str) -> bytes:
    return _BOMS.get(encoding, b"") + text.encode(encoding)


def encode(text: str, fmt: TextFormat) -> bytes:
    """The whole text in one newline style (new files, and workspaces that store text)."""
    if fmt.newline != "\n":
        text = text.replace("\n", fmt.newline)
    return _to_bytes(text, fmt.encoding)


def _lines(text: str) -> list[str]:
    """Lines split at "\n" only (a lone "\r" is content), each keeping its end."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return lines + [parts[-1]] if parts[-1] else lines


def encode_edit(data: bytes, new_text: str) -> bytes:
    """new_text ("\n" line ends) written over the file whose bytes are data.

    Lines the edit leaves alone keep their bytes, line end included; a changed line takes the end
    of the line it replaces, an added line the file's main style. Raises UnicodeEncodeError when
    the file's encoding cannot hold the new text.
    """
    raw, encoding = _decode_raw(data)
    newline = _newline(raw)
    crlf = raw.count("\r\n")
    if crlf in (0, raw.count("\n")):  # one style throughout: nothing to keep line by line
        return encode(new_text, TextFormat(encoding, newline))
    old_raw = _lines(raw)
    old = [line[:-2] + "\n" if line.endswith("\r\n") else line for line in old_raw]
    new = _lines(new_text)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            out.extend(old_raw[i1:i2])
            continue
        for offset, line in enumerate(new[j1:j2]):
            if not line.endswith("\n"):
                out.append(line)
                continue
            paired = old_raw[i1 + offset] if i1 + offset < i2 else ""
            ending = "\r\n" if paired.endswith("\r\n") else "\n" if paired.endswith("\n") else newline
            out.append(line[:-1] + ending)
    return _to_bytes("".join(out), encoding)
