"""`session/load` in the session host (agent/host): the editor joins the session next to the other
front ends (`run --attach`, `serve`'s followers, the app) instead of opening a second copy of it.

The host is started on demand, as `run --attach` does; the session is joined when it is live there,
else the host resumes it. The editor first receives the session so far as `session/update`s, then
the live stream: other front ends' prompts as user message chunks, the agent's events mapped as an
in-process session's are. An approval asked by any front end's turn becomes a
`session/request_permission` here; when another front end answers first, the request no longer
applies and is withdrawn with ACP's `$/cancel_request` (the client answers it with the cancelled
outcome or error -32800), and the tool call's title says who answered. `session/prompt` queues in
the host, `session/cancel` stops the host's run, a closed connection detaches (the run goes on).
When no host can be used, session/load works in-process as before, and says so once.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import AllowedOutcome, ImageContentBlock, PermissionOption, PromptResponse, ToolCallUpdate

from agent import events as ev
from agent.client.commands import MODES, Answer, Note, Prompt, Reply, SetMode, Stop
from agent.client.hosted import HostedHandle, HostRefused, HostUnavailable, open_in_host
from agent.frontends.acp.hosted_events import HostedEvents, approval_content
from agent.frontends.acp.permission import APPROVAL_OPTIONS
from agent.frontends.acp.prompt import prompt_text
from agent.frontends.acp.session import STOP_REASONS
from agent.frontends.acp.tools import tool_kind, tool_locations, tool_title
from agent.frontends.acp.updates import UpdateStream
from agent.frontends.acp.withdraw import PermissionIds
from agent.textsafe import visible

log = logging.getLogger("coder_tui.acp")
OPTION_FLAGS = ("model", "api_base", "api_key", "mode", "max_steps", "sandbox", "profile", "workflow", "reasoning")
_said: list[str] = []  # "no host": said once per process


def open_options(options: Any, root: Path) -> dict[str, Any]:
    """The host's `open` options: this process's flags, the editor's folder."""
    values = {name: getattr(options, name, None) for name in OPTION_FLAGS}
    return {"workspace": str(root), **{k: v for k, v in values.items() if v is not None}}


class HostedSession:
    """One ACP session joined in the session host; the same face to AcpAgent as AcpSession. The
    replay, the follow and who answered first are the `HostedHandle`'s (agent/client/hosted.py)."""

    def __init__(self, conn: Any, handle: HostedHandle, ids: PermissionIds, session_id: str, root: Path) -> None:
        self.conn, self.handle, self.ids, self.name = conn, handle, ids, handle.name
        self.session_id = session_id  # as the editor named it
        self.root = root
        self.stream = UpdateStream(conn, session_id)
        self.events = HostedEvents(self.stream, root)
        self.asked: dict[str, ev.ApprovalRequired] = {}  # approval id -> its event, while it waits
        self.asking: dict[str, asyncio.Task[None]] = {}  # approval id -> the permission request out
        self.resolved: set[str] = set()
        self._calls: dict[str, str] = {}  # approval id -> its tool call, from its answer until who answered is said
        self.pending: list[str] = []  # approvals waiting when this client joined
        self.turn: asyncio.Task[Reply] | None = None  # this client's prompt, running or queued
        self._early: list[object] | None = []  # items that came between the replay and `go`
        self.following: asyncio.Task[None] | None = None

    @property
    def mode(self) -> str:
        return self.handle.mode

    @classmethod
    async def join(cls, conn: Any, ids: PermissionIds, options: Any, root: Path, session_id: str,
                   mcp_servers: list[str]) -> tuple[HostedSession | None, list[str]]:
        """The session joined in the host (started if none runs); else None and what to say in-process
        (that no host can be used: once per process)."""
        try:
            handle = await open_in_host(session_id, f"acp (pid {os.getpid()})", open_options(options, root))
        except (HostRefused, ConnectionError, TimeoutError) as exc:
            raise RequestError.invalid_params({"sessionId": session_id, "message": str(exc)}) from None
        except HostUnavailable as exc:
            if _said:
                return None, []
            _said.append(str(exc))
            log.warning("the session host is not available (%s); sessions load in-process", visible(str(exc)))
            return None, [f"the session host is not available ({visible(str(exc))}); this session runs in this "
                          "process only"]
        self = cls(conn, handle, ids, session_id, root)
        handle.listen(self._listen)
        for item in handle.history():
            self._take(item, replaying=True)
        self.pending = [a for a in handle.pending if a in self.asked]
        for server in mcp_servers:
            self.events.note(f"⚠ MCP server {visible(server)} not added: a session shared in the session host "
                             "keeps its own")
        if handle.started_host:
            self.events.note("started the session host (it stays for the next front end)")
        await self.stream.flush()
        return self, []

    @property
    def gone(self) -> bool:
        """The host's connection ended: session/load may join the session again."""
        return self.handle.lost.is_set()

    def go(self) -> None:
        """After session/load's answer: the approvals waiting, then the live stream."""
        for approval_id in self.pending:
            self._ask(self.asked[approval_id])
        early, self._early = self._early or [], None
        for item in early:
            self._live(item)
        self.following = asyncio.get_running_loop().create_task(self._watch(), name=f"acp-host-{self.session_id}")

    def _listen(self, item: object) -> None:
        if self._early is not None:
            self._early.append(item)
        else:
            self._live(item)

    def _live(self, item: object) -> None:
        try:
            self._take(item, replaying=False)
        except Exception:  # one line must not end the stream
            log.exception("could not show a line of the session host")

    async def _watch(self) -> None:
        await self.handle.lost.wait()
        self.events.note("the session host stopped (connection lost); the session is recorded up to its last "
                         "event: session/load continues it")

    # -- the host's lines -----------------------------------------------------------------
    def _take(self, item: object, replaying: bool) -> None:
        if isinstance(item, Note):
            self._host_line(item.data)
            return
        event: Any = item
        if isinstance(event, ev.ApprovalRequired):
            self.asked[event.approval_id] = event
            self.events.titles[event.call_id] = tool_title(event.tool, event.args)
        self.events.handle(event)
        if isinstance(event, ev.ApprovalRequired) and not replaying:
            self._ask(event)
        elif isinstance(event, ev.ApprovalResolved):
            self._resolved(event)

    def _host_line(self, line: dict[str, Any]) -> None:
        kind = line["type"]
        if kind == "turn_started":
            self.events.mine = line.get("by") == self.name
            if self.events.mine:
                self.events.problem = None  # an earlier turn's fatal error is not this one's
        elif kind == "turn_done" and line.get("by") == self.name:
            self.events.mine = False
        elif kind == "approval_answered":
            call_id = self._calls.pop(str(line.get("approval_id")), None)
            if call_id is not None:
                self.events.answered(call_id, str(line.get("decision")), str(line.get("by")))
        elif kind == "host_closing":
            self.events.note("the session host is closing; the session is recorded")

    def _resolved(self, event: ev.ApprovalResolved) -> None:
        self.resolved.add(event.approval_id)
        asked = self.asked.pop(event.approval_id, None)
        if asked is not None:
            self._calls[event.approval_id] = asked.call_id
        task = self.asking.pop(event.approval_id, None)
        if asked is not None and task is not None and not task.done():
            self.ids.withdraw(self.session_id, asked.call_id)  # answered elsewhere: the request no longer applies

    # -- approvals --------------------------------------------------------------------------
    def _ask(self, event: ev.ApprovalRequired) -> None:
        if event.approval_id not in self.asking:
            self.asking[event.approval_id] = asyncio.get_running_loop().create_task(self._permission(event))

    async def _permission(self, event: ev.ApprovalRequired) -> None:
        always = f"Always allow {event.tool}" + (" (not the network)" if event.kind == "exec" else "")
        names = {"allow_once": "Allow", "allow_always": always, "reject": "Reject"}
        options = [PermissionOption(option_id=key, name=names[key], kind=kind)  # type: ignore[arg-type]
                   for key, (kind, _) in APPROVAL_OPTIONS.items()]
        call = ToolCallUpdate(tool_call_id=event.call_id, title=tool_title(event.tool, event.args),
                              kind=tool_kind(event.tool, event.kind), status="pending", content=approval_content(event),
                              locations=tool_locations(self.root, event.tool, event.args) or None, raw_input=event.args)
        await self.stream.flush()  # the client knows the tool call before it is asked about it
        if event.approval_id in self.resolved:
            return
        try:
            response = await self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options)
        except (RequestError, ConnectionError):  # withdrawn (-32800), or the client is gone
            return
        finally:
            self.ids.done(self.session_id, event.call_id)
        if event.approval_id in self.resolved:
            return  # another front end answered first: the cancelled outcome is the withdrawal's answer
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome):
            decision = APPROVAL_OPTIONS[outcome.option_id][1] if outcome.option_id in APPROVAL_OPTIONS else "deny"
        else:
            decision = "stop"  # the user cancelled the turn
        await self.handle.submit(Answer(event.approval_id, decision))  # refused: answered first elsewhere

    # -- requests ---------------------------------------------------------------------------
    async def prompt(self, blocks: list[Any]) -> PromptResponse:
        if self.turn is not None and not self.turn.done():
            raise RequestError.invalid_request({"message": "a prompt of this client is already running or queued"})
        if any(isinstance(block, ImageContentBlock) for block in blocks):
            raise RequestError.invalid_params({"message": "images cannot be sent to a session shared in the "
                                                          "session host; describe them in text"})
        from agent.workspaces.local import LocalWorkspace

        text = await prompt_text(blocks, LocalWorkspace(self.root))
        self.turn = asyncio.ensure_future(self.handle.submit(Prompt(text)))
        reply = await self.turn
        await self.stream.flush()
        if not reply.ok:
            if reply.kind == "unavailable":
                raise RequestError(-32603, f"{reply.error}; session/load the session again")
            raise RequestError.invalid_params({"message": str(reply.error)})
        if reply.stopped:  # stopped, or dropped by a stop before it ran: answered all the same
            return PromptResponse(stop_reason="cancelled")
        if reply.data.get("completion_reason") == "error" or reply.data.get("error"):
            raise RequestError(-32603, str(self.events.problem or reply.data.get("error") or "the turn failed"))
        return PromptResponse(stop_reason=STOP_REASONS.get(str(reply.data.get("completion_reason")), "end_turn"))

    def advertise_commands(self) -> None:
        """The host's session has its custom commands; typed `/name` prompts run them there."""

    def cancel(self) -> None:
        asyncio.get_running_loop().create_task(self.handle.submit(Stop()))

    def set_mode(self, mode: str) -> None:
        """session/set_mode: the mode of the shared session from its next turn on (the others are told)."""
        if mode not in MODES:
            raise RequestError.invalid_params({"modeId": mode, "message": f"unknown mode {mode[:30]!r}"})
        asyncio.get_running_loop().create_task(self.handle.submit(SetMode(mode)))  # type: ignore[arg-type]

    async def close(self) -> None:
        """Detach: the run goes on in the host for the other front ends."""
        for task in self.asking.values():
            task.cancel()
        if self.following is not None:
            self.following.cancel()
        await self.handle.close(detach=True)
        await self.stream.close()
