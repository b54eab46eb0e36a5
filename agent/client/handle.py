"""`SessionHandle`: what every front end holds to drive one session.

    handle = await connect(options)            # agent/client/connect.py: the host, or this process
    for item in handle.history(): show(item)   # the session so far (a resumed one's record, a live one's turns)
    reply = await handle.submit(Prompt("fix the test"))   # when the turn has ended (or a stop dropped it)
    async for item in handle.events(): show(item)          # the session's events and Notes, every client's
    await handle.close(detach=True)

Both implementations (agent/client/local.py, agent/client/hosted.py) send the same items: the
session's events (agent/events.py models) and `Note`s in the host's line types (turn_started,
turn_done, prompts_dropped, approval_answered, mode_changed...). tests/client holds the suite that
runs every front-end behaviour on both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol, runtime_checkable

from agent.client.commands import Command, Note, Reply

Item = object  # an agent/events.py event model, or a Note


@runtime_checkable
class SessionHandle(Protocol):
    @property
    def session_id(self) -> str: ...

    @property
    def mode(self) -> str: ...

    @property
    def name(self) -> str:
        """How the other clients of the session see this one."""
        ...

    @property
    def pending(self) -> list[str]:
        """The approvals that wait for an answer, oldest first."""
        ...

    async def submit(self, command: Command) -> Reply: ...

    def events(self) -> AsyncIterator[Item]:
        """Every item from now on, until the handle closes (each call: its own subscriber)."""
        ...

    def history(self) -> list[Item]: ...

    def listen(self, listener: Callable[[Item], None]) -> None:
        """`listener(item)` for each item as it comes, before the prompt it ends is answered."""
        ...

    async def close(self, detach: bool = False) -> None:
        """detach=True: a run in the session host goes on; else this handle's run is stopped."""
        ...


__all__ = ["Item", "Note", "Reply", "SessionHandle"]
