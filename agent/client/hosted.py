"""`HostedHandle`: a session in the session host (agent/host), driven by commands.

The one place that replays a session to a client joining it, follows the turns other clients
run, and knows that the first answer to an approval wins (the host decides; a late answer gets a
`conflict` refusal naming who answered). Its items are the ones `LocalHandle` sends: the host's
lines parsed back into events, and its own lines (turn_started, prompts_dropped...) as `Note`s.

    handle = await HostedHandle.open(client, session="new", name="serve #1", options={...})
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from pydantic import ValidationError

from agent import events as ev
from agent.client import commands as cmd
from agent.client.commands import Note, Reply, refusal_kind
from agent.client.fanout import Fanout, FanoutFace, Item
from agent.host.client import HostClient, HostRefused, HostUnavailable, live_sessions
from agent.host.wire import HOST_TYPES
from agent.hostplace import HostPlaceError

__all__ = ["HOST_TYPES", "HostClient", "HostRefused", "HostUnavailable", "HostedHandle", "live_sessions",
           "open_in_host"]

Data = dict[str, Any]
REPLAY_WAIT = 60.0
DYING_HOST_TRIES = 3  # connections to a host that closed them before its first answer, then the error


async def open_in_host(session: str, name: str, options: Data | None = None, *, live_only: bool = False,
                       start: bool = True, env: dict[str, str] | None = None) -> HostedHandle:
    """Session `session` (an id, a prefix, `last`, `new`) opened or joined in the session host, which
    is started when none runs (`start`). HostUnavailable: no host to use; HostRefused: the host's
    reason (an unknown session, one in use elsewhere...); ConnectionError: it went away meanwhile."""
    tries = 1
    while True:
        client = await _host_client(start)
        try:
            handle = await HostedHandle.open(client, session, name, options, live_only=live_only, env=env)
        except ConnectionError:
            await client.close()
            if client.started or tries == DYING_HOST_TRIES:
                raise
            tries += 1  # a host killed a moment ago: its socket took the connection as it died
            continue
        handle.started_host = client.started
        return handle


async def _host_client(start: bool) -> HostClient:
    if start:
        return await HostClient.connect_or_start()
    try:
        return await HostClient.connect()
    except (OSError, HostPlaceError) as exc:
        raise HostUnavailable(f"no session host runs ({exc})") from None


class HostedHandle(FanoutFace):
    def __init__(self, client: HostClient, name: str, opened: Data) -> None:
        self.client, self._name = client, name
        self.started_host = False  # opening it started the host
        self._session_id: str = opened["session_id"]
        self._mode: str = str(opened.get("mode"))
        self.model: str | None = opened.get("model")
        self.workspace_label: str = str(opened.get("workspace", ""))
        self.fanout = Fanout()
        self._pending: list[str] = []
        self.state: Data = {}  # the replay_end line: running, queued, the clients attached when joining
        self._turns: dict[int, asyncio.Future[Reply]] = {}  # this client's tickets -> their replies
        self._ended: dict[int, Reply] = {}  # tickets that ended before their prompt's reply came
        self.lost: asyncio.Event = asyncio.Event()  # set once the host's connection is gone
        self._following: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, client: HostClient, session: str, name: str, options: Data | None = None,
                   live_only: bool = False, env: dict[str, str] | None = None) -> HostedHandle:
        """The session opened (or joined) in the host, replayed so far (HostRefused: why not; the
        connection is closed then)."""
        fields: Data = {"session": session, "client": name, "options": options or {}, "live_only": live_only}
        if env is not None:
            fields["env"] = env
        try:
            handle = cls(client, name, await client.request("open", **fields))
            await handle._replay()
        except BaseException:
            await client.close()
            raise
        handle._following = asyncio.get_running_loop().create_task(handle._follow(), name=f"hosted-{handle._session_id}")
        return handle

    # -- the SessionHandle face -----------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def mode(self) -> str:
        return self._mode

    async def submit(self, command: cmd.Command) -> Reply:
        try:
            if isinstance(command, cmd.Prompt):
                return await self._prompt(command)
            kind, fields = _request(command)
            answer = await self.client.request(kind, **fields)
        except HostRefused as exc:
            return Reply.refused(str(exc), refusal_kind(str(exc)))
        except ConnectionError as exc:
            return Reply.refused(f"the session host is gone ({exc})", "unavailable")
        answer.pop("type", None)
        answer.pop("id", None)
        return Reply(data=answer)

    async def _prompt(self, prompt: cmd.Prompt) -> Reply:
        if prompt.images:
            return Reply.refused("images cannot be sent to a session in the session host (they are read "
                                 "by this process): describe them in text, or run this session here")
        ticket = int((await self.client.request("prompt", text=prompt.text, mentions=list(prompt.mentions)))["ticket"])
        if ticket in self._ended:
            return self._ended.pop(ticket)
        future = self._turns[ticket] = asyncio.get_running_loop().create_future()
        try:
            return await future
        finally:
            self._turns.pop(ticket, None)

    # -- the host's lines -----------------------------------------------------------------
    async def _replay(self) -> None:
        deadline = time.monotonic() + REPLAY_WAIT
        while True:
            line = await asyncio.wait_for(self.client.lines.get(), max(0.1, deadline - time.monotonic()))
            if line is None:
                raise ConnectionError("the session host closed the connection during the replay")
            if line.get("type") == "replay_end":
                self.state = line
                self._pending = [str(a) for a in line.get("pending", [])]
                return
            item = _item(line)
            if item is not None:
                self.fanout.publish(item)

    async def _follow(self) -> None:
        while (line := await self.client.lines.get()) is not None:
            self._line(line)
        self._gone()

    def _line(self, line: Data) -> None:
        kind = line.get("type")
        if kind == "mode_changed":
            self._mode = str(line.get("mode"))
        elif kind == "approval_required":
            self._pending.append(str(line.get("approval_id")))
        elif kind == "approval_resolved" and line.get("approval_id") in self._pending:
            self._pending.remove(str(line.get("approval_id")))
        item = _item(line)
        if item is not None:
            self.fanout.publish(item)  # before the turn's reply: its listeners have seen all of it
        if kind == "turn_done":
            self._end(line.get("ticket"), Reply(data={k: v for k, v in line.items() if k != "type"}))
        elif kind == "prompts_dropped":
            for ticket in line.get("tickets", []):
                self._end(ticket, Reply(data={"ticket": ticket, "success": False, "completion_reason": "stopped",
                                              "dropped": True}))

    def _end(self, ticket: Any, reply: Reply) -> None:
        if not isinstance(ticket, int):
            return
        future = self._turns.get(ticket)
        if future is None:
            self._ended[ticket] = reply  # ours, before the prompt's reply named it; or another client's
            if len(self._ended) > 256:
                self._ended.pop(next(iter(self._ended)))
        elif not future.done():
            future.set_result(reply)

    def _gone(self) -> None:
        gone = Reply.refused(f"the session host stopped (connection lost); session {self._session_id} is "
                             "recorded up to its last event and continues when opened again", "unavailable")
        for future in self._turns.values():
            if not future.done():
                future.set_result(gone)
        self.lost.set()
        self.fanout.close()

    async def close(self, detach: bool = False) -> None:
        """Leave the session (its run goes on in the host for the others; detach or not, the
        host keeps it: a hosted session is everyone's)."""
        with contextlib.suppress(HostRefused, ConnectionError, TimeoutError):
            await asyncio.wait_for(self.client.request("detach"), 10)
        await self.client.close()
        if self._following is not None:
            self._following.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._following
        self.fanout.close()


def _item(line: Data) -> Item | None:
    if line.get("type") in HOST_TYPES:
        return Note(str(line["type"]), line)
    try:
        return ev.parse_event(line)
    except (ValidationError, ValueError):
        return None  # a line of a newer host: not shown


def _request(command: cmd.Command) -> tuple[str, Data]:
    """The host request (its type and fields) of a command other than a prompt."""
    if isinstance(command, cmd.Answer):
        return "approve", {"approval_id": command.approval_id, "decision": command.decision,
                           "feedback": command.feedback, "rejected_hunks": command.rejected_hunks,
                           "edited": command.edited}
    if isinstance(command, cmd.Stop):
        return "stop", {}
    if isinstance(command, cmd.Detach):
        return "detach", {}
    if isinstance(command, cmd.Undo):
        return "undo", {"ref": command.ref}
    if isinstance(command, cmd.SetMode):
        return "set", {"mode": command.mode}
    if isinstance(command, cmd.SetModel):
        return "set", {"model": command.model}
    if isinstance(command, cmd.SetReasoning):
        return "set", {"reasoning": command.level}
    if isinstance(command, cmd.SetProfile):
        return "set", {"profile": command.name}
    if isinstance(command, cmd.PlanDecision):
        plan: Data = {"decision": command.decision, "feedback": command.feedback}
        if command.steps is not None:
            plan["steps"] = command.steps
        return "set", {"plan": plan}
    raise TypeError(f"not a command: {type(command).__name__}")
