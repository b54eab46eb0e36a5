"""What a room pane shows: one state object, updated by the room client, rendered by front ends."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from agent.events import RoomPhase

# Presence colours, chosen per peer from a stable hash (VS Code picks its own; these are ours).
PALETTE = ("#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#d19a66", "#be5046")


def peer_colour(peer_id: str) -> str:
    digest = hashlib.sha1(peer_id.encode("utf-8")).digest()
    return PALETTE[digest[0] % len(PALETTE)]


@dataclass
class PeerStatus:
    id: str
    name: str
    email: str | None = None
    host: bool = False
    colour: str = ""
    path: str | None = None  # the document this peer is looking at (awareness selection)


@dataclass
class RoomStatus:
    server: str
    room_id: str
    name: str  # our display name
    phase: RoomPhase = "starting"
    message: str = ""  # the latest human-readable status line
    peer_id: str | None = None
    host: PeerStatus | None = None
    peers: dict[str, PeerStatus] = field(default_factory=dict)  # guests other than us
    workspace: str = ""
    folders: list[str] = field(default_factory=list)
    readonly: bool = False
    followed: str | None = None
    login_url: str | None = None
    queue: list[str] = field(default_factory=list)  # pending triggers, oldest first
    working_on: str | None = None
    last_trigger: str | None = None
    close_reason: str | None = None

    def everyone(self) -> list[PeerStatus]:
        return ([self.host] if self.host else []) + list(self.peers.values())
