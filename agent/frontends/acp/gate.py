"""The lines an editor sends, checked before the ACP SDK reads them.

The SDK takes every line for a JSON object: a `[]` line ended its receive loop (and the process),
and a line it could not parse (invalid, or nested too deep for Python's parser) was logged and
never answered, so the editor waited forever. Here each line is parsed once; what is not one
JSON-RPC object gets the JSON-RPC error it calls for (parse error -32700, invalid request
-32600) and the process goes on. Only well-formed objects reach the SDK.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

MAX_DEPTH = 64  # ACP's messages nest a dozen levels at most; deeper is an attack on the parser
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def problem(raw: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error answer for a line that is not one JSON-RPC object (None: it is)."""
    text = raw.strip()
    if not text:
        return None
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return _error(PARSE_ERROR, f"Parse error: {why}", _id_hint(text))
    if not isinstance(message, dict):
        what = "a batch (array)" if isinstance(message, list) else f"a JSON {type(message).__name__}"
        return _error(INVALID_REQUEST, f"Invalid Request: {what}; send one JSON-RPC object a line", None)
    request_id = message.get("id")
    if not isinstance(request_id, (str, int, type(None))) or isinstance(request_id, bool):
        return _error(INVALID_REQUEST, "Invalid Request: id must be a string, a number or null", None)
    if "method" in message and not isinstance(message["method"], str):
        return _error(INVALID_REQUEST, "Invalid Request: method must be a string", request_id)
    if _depth(message) > MAX_DEPTH:
        return _error(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels", request_id)
    return None


def _error(code: int, message: str, request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _id_hint(text: bytes) -> Any:
    """The request's id when it comes before the first nested value (a parse error has no other)."""
    opener = min((i for i in (text.find(b"{", 1), text.find(b"[", 1)) if i > 0), default=len(text))
    found = _ID.search(text[:opener])
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:
        return None


def _depth(value: Any) -> int:
    """How deeply a parsed value nests (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


async def _line(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(await reader.readuntil(b"\n"))
            return b"".join(chunks)
        except asyncio.LimitOverrunError as exc:
            chunks.append(await reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)


def gated(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[asyncio.StreamReader, asyncio.Task]:
    """A reader for the SDK that holds only well-formed JSON-RPC objects; the others are answered
    on `writer` with their error. Returns the reader and the task that feeds it."""
    checked = asyncio.StreamReader(limit=reader._limit)  # noqa: SLF001 - the same bound as stdin's

    async def feed() -> None:
        try:
            while line := await _line(reader):
                answer = problem(line)
                if answer is None:
                    checked.feed_data(line if line.endswith(b"\n") else line + b"\n")
                else:
                    writer.write(json.dumps(answer).encode() + b"\n")
                    await writer.drain()
        finally:
            checked.feed_eof()

    return checked, asyncio.get_running_loop().create_task(feed(), name="acp-gate")
