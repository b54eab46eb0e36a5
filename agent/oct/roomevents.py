"""A room client's notifications as events, for whatever front end shows the room."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.events import PeerJoined, PeerLeft, RoomClosed, RoomState
from agent.oct.client import RoomClient


def room_events(client: RoomClient, emit: Callable[[Any], None]) -> None:
    """Turn the client's notifications into room events for a printer or a UI."""
    status = client.status

    def state() -> RoomState:
        return RoomState(phase=status.phase, message=status.message, room_id=status.room_id,
                         server=status.server, peer_id=status.peer_id,
                         host=status.host.name if status.host else None, followed=status.followed,
                         readonly=status.readonly, login_url=status.login_url)

    def listener(what: str, detail: Any) -> None:
        if what == "followed":
            emit(state().model_copy(update={"message": f"following {detail}"}))
        elif what in ("state", "permissions", "login_url") and status.phase != "closed":
            emit(state())
        elif what == "state" and status.phase == "closed":
            emit(RoomClosed(reason=status.close_reason or "closed"))
        elif what == "peer_joined":
            emit(PeerJoined(peer_id=detail.id, name=detail.name, email=detail.email, colour=detail.colour))
        elif what == "peer_left":
            emit(PeerLeft(peer_id=detail.id, name=detail.name))

    client.listeners.append(listener)
