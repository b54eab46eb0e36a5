"""open_target on an OCT room that will not let us in: one TargetError (not a usage error), the
room's events on the way, and the client left behind us."""

from __future__ import annotations

from typing import Any

import pytest

from agent.events import RoomClosed, RoomState
from agent.session.target import TargetError, TargetSpec, open_target


async def test_a_room_that_is_not_there_is_a_target_error_with_its_reason(oct_server: Any) -> None:
    seen: list[Any] = []
    watched: list[Any] = []
    spec = TargetSpec(room="no-such-room", server=oct_server.url, name="bot")
    with pytest.raises(TargetError) as info:
        await open_target(spec, emit=seen.append, on_login=None, watch_room=watched.append)
    error = info.value
    assert error.message == "could not join room no-such-room: Room not found"
    assert error.reason == "Room not found" and not error.usage and "--server" in error.hint
    assert [w.options.room_id for w in watched] == ["no-such-room"] and watched[0].closed.is_set()
    assert any(isinstance(e, RoomState) for e in seen)
    assert [e.reason for e in seen if isinstance(e, RoomClosed)] == ["could not join: Room not found"]
