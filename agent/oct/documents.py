"""The room's shared Yjs document (pycrdt) and awareness, synced over `sync/*`.

OCT frames y-protocols sync messages without y-websocket's leading message-type byte:
`varUint(type) + varUint8Array(payload)` with type 0 (step 1: state vector), 1 (step 2: update)
and 2 (update). Awareness updates travel as `varUint8Array(awareness update)`.

Every open text file is the Y.Text named by its protocol path. pycrdt indexes text by UTF-8 byte
offsets (Yjs by UTF-16 units; the wire format is independent of either); `agent.oct.textpos`
converts to and from Python string indices, `agent.oct.positions` keeps positions sticky.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

from pycrdt import Awareness, Doc, Text, TextEvent, TransactionEvent
from pycrdt._sync import read_message, write_message

from agent.oct.connection import OctConnection
from agent.oct.positions import PositionLog
from agent.oct.messages import Methods

log = logging.getLogger(__name__)

STEP1, STEP2, UPDATE = 0, 1, 2
RESYNC_SECONDS = 10.0
AWARENESS_RENEW_SECONDS = 15.0
AWARENESS_OUTDATED_SECONDS = 30.0

# (path, delta in UTF-8 byte units, text length before the change in bytes, origin peer id)
RemoteTextListener = Callable[[str, list[dict[str, Any]], int, str], None]


def frame(kind: int, payload: bytes) -> bytes:
    return bytes([kind]) + write_message(payload)


class RoomDocuments:
    def __init__(self, connection: OctConnection, client_id: int | None = None) -> None:
        self.connection = connection
        self.doc: Doc = Doc(client_id=client_id) if client_id is not None else Doc()
        self.awareness = Awareness(self.doc)
        self.awareness.set_local_state(None)  # published once we know our peer id
        self._texts: dict[str, Text] = {}
        self._positions: dict[str, PositionLog] = {}
        self._subscriptions: list[Any] = []
        self._remote = False
        self._remote_origin = ""
        self._listeners: list[RemoteTextListener] = []
        self._after_remote: list[Callable[[], None]] = []
        self._awareness_listeners: list[Callable[[], None]] = []
        self._last_resync = self._last_renew = time.monotonic()
        self.updates_applied = 0
        # Delivery of our own changes: `version` counts them, `delivered` is the newest one known
        # to have gone out to the room's current peers; `_inflight` holds (write seq, version).
        self.version = 0
        self.delivered = 0
        self._inflight: deque[tuple[int, int]] = deque()
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.doc.observe(self._on_doc_update)
        self.awareness.observe(self._on_awareness_event)
        for method in (Methods.SYNC_DATA_UPDATE, Methods.SYNC_DATA_NOTIFY):
            connection.on(method, self._on_data)
        for method in (Methods.SYNC_AWARENESS_UPDATE, Methods.SYNC_AWARENESS_NOTIFY):
            connection.on(method, self._on_awareness)
        connection.on(Methods.SYNC_AWARENESS_QUERY, self._on_awareness_query)

    # -- texts ----------------------------------------------------------------------------
    def paths(self) -> list[str]:
        """Protocol paths of every shared text we know of."""
        self._discover()
        return sorted(self._texts)

    def has_text(self, path: str) -> bool:
        self._discover()
        return path in self._texts

    def text(self, path: str) -> Text:
        """The Y.Text for path (created empty when nobody shared it yet)."""
        found = self._texts.get(path)
        if found is None:
            found = self.doc.get(path, type=Text)
            self._track(path, found)
        return found

    def positions(self, path: str) -> PositionLog:
        """The change log that keeps sticky positions in path's text current."""
        log_ = self._positions.get(path)
        if log_ is None:
            log_ = self._positions[path] = PositionLog(self.text(path))
        return log_

    def read(self, path: str) -> str | None:
        self._discover()
        found = self._texts.get(path)
        return None if found is None else str(found)

    def _track(self, path: str, text: Text) -> None:
        self._texts[path] = text
        # pycrdt passes as many arguments as the callback declares: a partial declares one
        self._subscriptions.append(text.observe(partial(self._on_text_event, path)))

    def _discover(self) -> None:
        for name in self.doc.keys():
            if name not in self._texts:
                try:
                    self._track(name, self.doc.get(name, type=Text))
                except Exception:  # a root that is not a text: not ours to watch
                    log.debug("shared root %r is not a text", name)

    def on_remote_text_change(self, listener: RemoteTextListener) -> None:
        """Called inside the transaction that applies a remote update: read, never write."""
        self._listeners.append(listener)

    def on_after_remote(self, callback: Callable[[], None]) -> None:
        """Called once a remote update is applied (writing and anchoring are allowed again)."""
        self._after_remote.append(callback)

    def _on_text_event(self, path: str, event: TextEvent) -> None:
        if not self._remote or not self._listeners:
            return
        try:
            delta = list(event.delta)
            inserted = sum(len(op["insert"].encode()) for op in delta if isinstance(op.get("insert"), str))
            deleted = sum(op["delete"] for op in delta if isinstance(op.get("delete"), int))
            before = len(self._texts[path]) - inserted + deleted
            for listener in self._listeners:
                listener(path, delta, before, self._remote_origin)
        except Exception:  # an exception here would make pycrdt fail the whole update
            log.exception("text listener failed")

    # -- sync -----------------------------------------------------------------------------
    def _on_doc_update(self, event: TransactionEvent) -> None:
        if self._remote:
            return  # unlike the JS provider we do not echo what peers sent us
        self.version += 1
        self._track_delivery(self.connection.broadcast(Methods.SYNC_DATA_UPDATE, frame(UPDATE, event.update)))

    # -- delivery of our changes ---------------------------------------------------------------
    def _track_delivery(self, seq: int) -> None:
        if seq:
            self._inflight.append((seq, self.version))

    def sent(self, seq: int, settled: bool) -> None:
        """The transport sent write `seq` (and all before it). Writes sent before the connection
        settled may have gone to a server that no longer knows their recipients: they do not count;
        the full state sent once it settles covers them."""
        newest = self.delivered
        while self._inflight and self._inflight[0][0] <= seq:
            _, version = self._inflight.popleft()
            if settled:
                newest = max(newest, version)
        self.delivered = newest
        for version, future in [w for w in self._waiters if w[0] <= newest]:
            self._waiters.remove((version, future))
            if not future.done():
                future.set_result(None)

    def forget_deliveries(self) -> None:
        """We are a new peer in the room (the server restarted): what was queued for the old
        peers is lost; the next full sync delivers everything."""
        self._inflight.clear()

    async def until_delivered(self, version: int) -> None:
        """Wait until our changes up to `version` went out to the room's peers."""
        if self.delivered >= version:
            return
        waiter = (version, asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        try:
            await waiter[1]
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _on_data(self, origin: str, payload: Any = None, *_: Any) -> None:
        if not isinstance(payload, bytes) or len(payload) < 2:
            log.warning("ignoring a malformed sync message from %s", origin)
            return
        kind = payload[0]
        try:
            if kind == STEP1:
                update = self.doc.get_update(read_message(payload[1:]))
                self.connection.notify(Methods.SYNC_DATA_NOTIFY, origin, frame(STEP2, update))
            elif kind in (STEP2, UPDATE):
                self.apply_remote(read_message(payload[1:]), origin)
            else:
                log.warning("unknown sync message type %d from %s", kind, origin)
        except Exception as exc:  # pycrdt raises assorted errors for corrupt updates
            log.warning("ignoring a sync message from %s that cannot be applied: %s", origin, exc)

    def apply_remote(self, update: bytes, origin: str = "") -> None:
        if update == b"\x00\x00":
            return
        self._discover()
        self._remote, self._remote_origin = True, origin
        try:
            self.doc.apply_update(update)
        finally:
            self._remote, self._remote_origin = False, ""
        self.updates_applied += 1
        self._discover()
        for callback in self._after_remote:
            try:
                callback()
            except Exception:
                log.exception("after-update callback failed")

    def sync_all(self) -> None:
        """Step 1, our step 2, an awareness query and our awareness (after init, reconnect)."""
        self.resync()
        self._track_delivery(self.connection.broadcast(Methods.SYNC_DATA_UPDATE, frame(STEP2, self.doc.get_update())))
        self.connection.broadcast(Methods.SYNC_AWARENESS_QUERY)
        self._broadcast_awareness([self.doc.client_id])

    def resync(self) -> None:
        self._last_resync = time.monotonic()
        self.connection.broadcast(Methods.SYNC_DATA_UPDATE, frame(STEP1, self.doc.get_state()))

    def tick(self) -> None:
        """Periodic upkeep (call about once a second): resync, awareness renewal and expiry."""
        now = time.monotonic()
        if now - self._last_resync >= RESYNC_SECONDS:
            self.resync()
        local = self.awareness.get_local_state()
        if local is not None and now - self._last_renew >= AWARENESS_RENEW_SECONDS:
            self.awareness.set_local_state(local)
        now_ms = time.time() * 1000  # pycrdt's awareness meta holds wall-clock milliseconds
        outdated = [
            client
            for client, meta in self.awareness.meta.items()
            if client != self.doc.client_id
            and client in self.awareness.states
            and now_ms - meta["lastUpdated"] >= AWARENESS_OUTDATED_SECONDS * 1000
        ]
        if outdated:
            self.awareness.remove_awareness_states(outdated, "timeout")

    # -- awareness ------------------------------------------------------------------------
    def _on_awareness(self, origin: str, payload: Any = None, *_: Any) -> None:
        if not isinstance(payload, bytes):
            return
        try:
            self.awareness.apply_awareness_update(read_message(payload), origin)
        except Exception as exc:
            log.warning("ignoring a malformed awareness update from %s: %s", origin, exc)

    def _on_awareness_query(self, origin: str, *_: Any) -> None:
        clients = list(self.awareness.states)
        if clients and origin in self.connection.peers:
            update = self.awareness.encode_awareness_update(clients)
            self.connection.notify(Methods.SYNC_AWARENESS_NOTIFY, origin, write_message(update))

    def _broadcast_awareness(self, clients: list[int]) -> None:
        update = self.awareness.encode_awareness_update(clients)
        self.connection.broadcast(Methods.SYNC_AWARENESS_UPDATE, write_message(update))

    def _on_awareness_event(self, topic: str, payload: tuple[dict[str, list[int]], Any]) -> None:
        changes, origin = payload
        if origin == "local" and topic == "update":
            self._last_renew = time.monotonic()
            self._broadcast_awareness(changes["added"] + changes["updated"] + changes["removed"])
        if topic == "change" and origin != "local":
            for listener in self._awareness_listeners:
                listener()

    def on_awareness_change(self, listener: Callable[[], None]) -> None:
        self._awareness_listeners.append(listener)

    def set_identity(self, peer_id: str) -> None:
        state = dict(self.awareness.get_local_state() or {})
        state["peer"] = peer_id
        self.awareness.set_local_state(state)

    def set_selection(self, selection: dict[str, Any] | None) -> None:
        state = dict(self.awareness.get_local_state() or {})
        if selection is None:
            state.pop("selection", None)
        else:
            state["selection"] = selection
        self.awareness.set_local_state(state)

    def peer_states(self) -> dict[str, dict[str, Any]]:
        """Awareness state by peer id (the latest client of each peer)."""
        result: dict[str, dict[str, Any]] = {}
        for client, state in self.awareness.states.items():
            if client != self.doc.client_id and isinstance(state, dict):
                peer = state.get("peer")
                if isinstance(peer, str):
                    result[peer] = state
        return result

    def forget_peer(self, peer_id: str) -> None:
        states = self.awareness.states.items()
        gone = [c for c, s in states if isinstance(s, dict) and s.get("peer") == peer_id]
        if gone:
            self.awareness.remove_awareness_states(gone, "peer left")

    def leave(self) -> None:
        """Tell the others our awareness state is gone (before leaving the room)."""
        if self.awareness.get_local_state() is not None:
            self.awareness.set_local_state(None)
