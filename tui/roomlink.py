"""`coder-tui --room ROOM_ID`: the app attached to a live Open Collaboration Tools room.

The same protocol client and room agent as `coder-tui room`; here the room pane shows the
connection, people and trigger queue, approvals open the diff screen, and prompts typed into the
app are answered in turn with the room's own `@agent` triggers.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable
from typing import Any


class RoomLink:
    def __init__(self, options: Any, emit: Callable[[Any], None], changed: Callable[[], None]) -> None:
        from agent.oct.client import RoomClient, RoomOptions
        from agent.oct.crypto import start_key_pair
        from agent.oct.roomevents import room_events

        self.name = options.name
        # The 4096-bit key is generated in a thread while we log in and wait for the host.
        self.client = RoomClient(RoomOptions(room_id=options.room, server=options.server, name=options.name,
                                             email=options.email, on_web_login=_open_browser), start_key_pair())
        room_events(self.client, emit)
        self.client.listeners.append(lambda what, detail: changed())
        self.changed = changed
        self.agent: Any = None
        self.workspace: Any = None
        self.failed: str | None = None  # why the join failed (the client's phase stays where it stopped)

    @property
    def status(self) -> Any:
        return self.client.status

    async def join(self) -> Any:
        """Join (OctError with the server's reason on failure); returns the room workspace."""
        from agent.oct.errors import OctError
        from agent.workspaces.room import RoomWorkspace

        try:
            await self.client.join()
        except OctError as exc:
            self.failed = exc.message
            self.changed()
            raise
        self.workspace = RoomWorkspace(self.client)
        return self.workspace

    def start(self, session: Any, app: Any) -> None:
        """Answer the room's triggers with this session, one at a time, in order."""
        from agent.oct.roomagent import RoomAgent

        self.agent = RoomAgent(self.client, self.workspace, session, session.emit, self.name)
        app.run_worker(self.agent.run(), name="room-agent", group="room", exit_on_error=False)

    def rebind(self, session: Any) -> None:
        """A new conversation (/clear, /resume) answers the next triggers."""
        if self.agent is not None:
            self.agent.session, self.agent.emit = session, session.emit

    def ask(self, prompt: str) -> None:
        self.agent.ask(prompt)

    def clear_queue(self) -> None:
        """A stop also drops the prompts typed here and not answered yet; the room's own triggers
        stay queued (their authors wait for them, with a spinner in their document)."""
        agent = self.agent
        if agent is None:
            return
        jobs = []
        while not agent.queue.empty():
            jobs.append(agent.queue.get_nowait())
        status = agent.client.status  # its queue labels the jobs waiting, in the same order
        kept = [(job, label) for job, label in zip(jobs, status.queue) if job.trigger.source != "local"]
        status.queue[:] = [label for _, label in kept]
        for job, _ in kept:
            agent.queue.put_nowait(job)
        agent.client.publish("queue", len(status.queue))

    async def leave(self) -> None:
        await self.client.leave()


def _open_browser(prompt: Any) -> None:
    """Try to open the login page; the room pane shows the address either way."""
    threading.Thread(target=webbrowser.open, args=(prompt.url,), name="open-login", daemon=True).start()
