"""`coder-tui --room ROOM_ID`: the app attached to a live Open Collaboration Tools room.

The same protocol client and room agent as `coder-tui room`; here the room pane shows the
connection, people and trigger queue, approvals open the diff screen, and prompts typed into the
app are answered in turn with the room's own `@agent` triggers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.oct.client import RoomClient
    from agent.session.room import RoomAgent
    from agent.oct.status import RoomStatus
    from agent.session.target import Target
    from tui.ports import TaskRunner


class RoomLink:
    """The app's side of a room that `open_target` joins: its client from before the join (the
    pane follows it), why the join failed, and the prompts typed here."""

    def __init__(self, client: RoomClient, changed: Callable[[], None]) -> None:
        self.client = client
        client.listeners.append(lambda what, detail: changed())
        self.changed = changed
        self.target: Target | None = None  # once joined
        self.failed: str | None = None  # why the join failed (the client's phase stays where it stopped)

    @property
    def status(self) -> RoomStatus:
        return self.client.status

    @property
    def agent(self) -> RoomAgent | None:
        """What answers the room's triggers, made when the first session is bound to the room."""
        return self.target.agent if self.target is not None else None

    def joined(self, target: Target) -> None:
        self.target = target

    def join_failed(self, reason: str) -> None:
        self.failed = reason
        self.changed()

    def start(self, runner: TaskRunner) -> None:
        """Answer the room's triggers with the bound session, one at a time, in order."""
        assert self.agent is not None, "a room's triggers are answered once a session is bound to it"
        runner.run_task(self.agent.run(), name="room-agent", group="room")

    def ask(self, prompt: str) -> None:
        assert self.agent is not None, "prompts reach a room once its session started"
        self.agent.ask(prompt)

    def clear_queue(self) -> None:
        """A stop drops every prompt waiting: those typed here and the room's own triggers, whose
        authors are told in the chat (agent/session/room.py `RoomAgent.stop`)."""
        agent = self.agent
        if agent is not None:
            agent.stop()
