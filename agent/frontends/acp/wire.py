"""What every message to the client gets on its way out, whoever built it (we or the SDK).

- A JSON-RPC error carries its reason in `error.data.details`: that is the field editors show
  (Toad prints "Failed to initialize agent — DETAILS"); ours put it in `data.message` or the
  error's message, the SDK's in `data.errors` or `data.method`.
- A diff for a new file says `"oldText": null`: the SDK serialises with `exclude_none`, so a
  missing old text is left out, and clients then show an empty diff instead of a new file.

The SDK writes one whole JSON message and its newline per `write`, so each is fixed there.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any


class WireWriter(asyncio.StreamWriter):
    """The protocol's stream writer: every message passes through `fix`."""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        super().write(fix(bytes(data)))


def fix(data: bytes) -> bytes:
    if b'"error"' not in data and b'"diff"' not in data:
        return data  # most messages: text chunks and tool calls
    try:
        message = json.loads(data)
    except ValueError:
        return data
    if not isinstance(message, dict):
        return data
    changed = _detail_error(message.get("error"))
    changed = _null_old_text(message.get("params") or message.get("result")) or changed
    return (json.dumps(message, separators=(",", ":")) + "\n").encode() if changed else data


def _detail_error(error: Any) -> bool:
    if not isinstance(error, dict):
        return False
    data = error.get("data")
    if isinstance(data, dict) and isinstance(data.get("details"), str) and data["details"]:
        return False
    error["data"] = {**(data if isinstance(data, dict) else {}), "details": details(error)}
    return True


def details(error: dict[str, Any]) -> str:
    """The reason an error carries, in one line a person can act on."""
    message, data = str(error.get("message") or "error"), error.get("data")
    if isinstance(data, dict):
        if isinstance(data.get("message"), str) and data["message"]:
            return data["message"]
        problems = data.get("errors")
        if isinstance(problems, list) and problems and isinstance(problems[0], dict):
            first = problems[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{message}: {where + ': ' if where else ''}{first.get('msg', 'invalid')}"
        if isinstance(data.get("method"), str):
            return f"{message}: {data['method']} (coder-tui does not offer it)"
    elif isinstance(data, str) and data:
        return f"{message}: {data}"
    return message


def _null_old_text(value: Any) -> bool:
    """Every diff content without an old text (a new file) gets `"oldText": null`."""
    changed = False
    if isinstance(value, dict):
        if value.get("type") == "diff" and "path" in value and "newText" in value and "oldText" not in value:
            value["oldText"] = None
            changed = True
        for item in value.values():
            changed = _null_old_text(item) or changed
    elif isinstance(value, list):
        for item in value:
            changed = _null_old_text(item) or changed
    return changed
