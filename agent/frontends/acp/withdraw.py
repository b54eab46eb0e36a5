"""Withdrawing a permission request that no longer applies (another front end of a session shared in
the session host answered it first) with ACP's `$/cancel_request`: the client answers the request
with the cancelled outcome or error -32800 (https://agentclientprotocol.com/protocol/v1/cancellation).

The Python SDK sends requests without telling their ids, so they are seen going out (a connection
observer), and the notification is written on the protocol's stream as the SDK writes its lines.
"""

from __future__ import annotations

import json
from typing import Any

from acp.connection import StreamDirection, StreamEvent


class PermissionIds:
    """Our `session/request_permission` requests' JSON-RPC ids (seen as they go out: the SDK keeps them
    to itself) and their withdrawal with `$/cancel_request`, written on the protocol's stream."""

    def __init__(self) -> None:
        self.writer: Any = None
        self._sent: dict[tuple[str, str], Any] = {}  # (session id, tool call id) -> request id
        self._unwanted: set[tuple[str, str]] = set()  # withdrawn before it was seen going out

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction != StreamDirection.OUTGOING or message.get("method") != "session/request_permission":
            return
        params = message.get("params") or {}
        key = (str(params.get("sessionId")), str((params.get("toolCall") or {}).get("toolCallId")))
        if key in self._unwanted:
            self._unwanted.discard(key)
            self._cancel(message.get("id"))
        else:
            self._sent[key] = message.get("id")

    def withdraw(self, session_id: str, call_id: str) -> None:
        request_id = self._sent.pop((session_id, call_id), None)
        if request_id is None:
            self._unwanted.add((session_id, call_id))
        else:
            self._cancel(request_id)

    def done(self, session_id: str, call_id: str) -> None:
        self._sent.pop((session_id, call_id), None)
        self._unwanted.discard((session_id, call_id))

    def _cancel(self, request_id: Any) -> None:
        if self.writer is not None and request_id is not None:
            notice = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}}
            self.writer.write(json.dumps(notice).encode() + b"\n")
