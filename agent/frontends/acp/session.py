"""One ACP session: the editor's view of a session handle (agent/client).

In this process on the editor's folder (`session/new`, or `session/load` when no host can be used;
file text through the editor when it offers that), or joined in the session host next to the
other front ends (`session/load`). One driver for both: the handle's events become
`session/update`s; an approval asked by any front end's turn becomes a `session/request_permission`
(withdrawn with `$/cancel_request` when another front end answers first, and the tool call then
says who answered), a plan review one too; `session/prompt` is a Prompt (queued behind the running
turn), `session/cancel` a Stop (every queued prompt is answered: cancelled), `session/set_mode` a
SetMode; a closed connection detaches (a run in the host goes on for the others).
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from pathlib import Path
from typing import Any

from acp import RequestError, start_tool_call, update_tool_call
from acp.schema import PromptResponse

from agent import events as ev
from agent.client import editor
from agent.client.commands import MODES, Answer, Note, PlanDecision, Prompt, Reply, SetMode, Stop
from agent.client.handle import SessionHandle
from agent.frontends.acp.events import HandleEvents, builtin_kind
from agent.frontends.acp.modes import STOP_REASONS
from agent.frontends.acp.permission import (approval_call, approval_options, decision_of, review_call,
                                            review_decision, review_options)
from agent.frontends.acp.prompt import history_updates, prompt_images, prompt_text
from agent.frontends.acp.updates import UpdateStream
from agent.frontends.acp.withdraw import PermissionIds
from agent.images import ImageError
from agent.session.shapes import skipped_note

log = logging.getLogger("coder_tui.acp")


class AcpSession:
    def __init__(self, conn: Any, ids: PermissionIds, root: Path, session_id: str = "") -> None:
        self.conn, self.ids, self.root = conn, ids, root
        self.session_id = session_id  # as the editor names it (set when the handle is opened)
        self.stream = UpdateStream(conn, session_id)
        self.events = HandleEvents(self.stream, root, self._approval_kind)
        self.handle: SessionHandle | None = None
        self.notes: list[str] = []  # said at the first prompt: the client knows the session id by then
        self.asked: dict[str, ev.ApprovalRequired] = {}  # approval id -> its event, while it waits
        self.asking: dict[str, asyncio.Task[None]] = {}  # approval id -> the permission request out
        self.resolved: set[str] = set()
        self._calls: dict[str, str] = {}  # approval id -> its tool call, until who answered is said
        self.turn: asyncio.Task[Reply] | None = None  # this client's prompt, running or queued
        self._early: list[object] | None = []  # items that came before `go`
        self._waiting: list[str] = []  # approvals waiting when this client joined
        self.following: asyncio.Task[None] | None = None

    def bind(self, handle: SessionHandle, replay: bool) -> None:
        """Drive `handle`; its items so far are shown (`replay`) or kept as notes (a new session's warnings)."""
        self.handle = handle
        self.session_id = self.stream.session_id = self.session_id or handle.session_id
        handle.listen(self._listen)
        items, record = handle.history(), editor.restored(handle)
        if not replay:  # what opening said: at the first prompt (a resumed session's record comes after it)
            said = items[: max(0, len(items) - len(record.events))] if record is not None else items
            self.notes.extend(item.message for item in said if isinstance(item, ev.WarningEvent))
        elif record is None:
            for item in items:
                self._take(item, replaying=True)
        self._waiting = [a for a in handle.pending if a in self.asked]

    @property
    def h(self) -> SessionHandle:
        assert self.handle is not None, "bind() a handle first"
        return self.handle

    @property
    def mode(self) -> str:
        return self.h.mode

    @property
    def gone(self) -> bool:
        """The host's connection ended: session/load may join the session again."""
        lost = editor.lost(self.h)
        return lost is not None and lost.is_set()

    def _approval_kind(self, name: str) -> str | None:
        return (editor.tool_kind(self.h, name) if self.handle is not None else None) or builtin_kind(name)

    async def replay(self) -> None:
        """A session resumed in this process: its conversation, tool calls and plan from its record."""
        record = editor.restored(self.h)
        if record is not None:
            updates, skipped = history_updates(record, self.root, self._approval_kind)
            for update in updates:
                self.stream.send(update)
            if skipped:
                self.events.handle(ev.WarningEvent(message=skipped_note(skipped)))
        await self.stream.flush()

    def go(self) -> None:
        """After session/new's or session/load's answer: the approvals waiting, then the live stream."""
        for approval_id in self._waiting:
            self._ask(self.asked[approval_id])
        early, self._early = self._early or [], None
        for item in early:
            self._live(item)
        lost = editor.lost(self.h)
        if lost is not None:
            self.following = asyncio.get_running_loop().create_task(self._watch(lost), name=f"acp-{self.session_id}")
        self.advertise_commands()

    def _listen(self, item: object) -> None:
        if self._early is not None:
            self._early.append(item)
        else:
            self._live(item)

    def _live(self, item: object) -> None:
        try:
            self._take(item, replaying=False)
        except Exception:  # one line must not end the stream
            log.exception("could not show an event of the session")

    async def _watch(self, lost: asyncio.Event) -> None:
        await lost.wait()
        self.events.note("the session host stopped (connection lost); the session is recorded up to its last "
                         "event: session/load continues it")

    # -- the session's items ----------------------------------------------------------------
    def _take(self, item: object, replaying: bool) -> None:
        if isinstance(item, Note):
            self._note(item.data)
            return
        event: Any = item
        if isinstance(event, ev.ApprovalRequired):
            self.asked[event.approval_id] = event
            self.events.titles[event.call_id] = approval_call(event, None, self.root).title or event.tool
        self.events.handle(event)
        if isinstance(event, ev.ApprovalRequired) and not replaying:
            self._ask(event)
        elif isinstance(event, ev.ApprovalResolved):
            self._resolved(event)
        elif isinstance(event, ev.PlanDecisionRequired) and not replaying:
            asyncio.get_running_loop().create_task(self._review(event))

    def _note(self, line: dict[str, Any]) -> None:
        kind = line["type"]
        if kind == "turn_started":
            self.events.mine = line.get("by") == self.h.name
            if self.events.mine:
                self.events.problem = None  # an earlier turn's fatal error is not this one's
        elif kind == "turn_done" and line.get("by") == self.h.name:
            self.events.mine = False
        elif kind == "approval_answered" and not editor.runs_here(self.h):
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

    # -- approvals and plan reviews -----------------------------------------------------------
    def _ask(self, event: ev.ApprovalRequired) -> None:
        if event.approval_id not in self.asking:
            self.asking[event.approval_id] = asyncio.get_running_loop().create_task(self._permission(event))

    async def _permission(self, event: ev.ApprovalRequired) -> None:
        await self.stream.flush()  # the client knows the tool call before it is asked about it
        if event.approval_id in self.resolved:
            return
        call = approval_call(event, editor.approval_request(self.h, event.approval_id), self.root)
        try:
            response = await self.conn.request_permission(session_id=self.session_id, tool_call=call,
                                                          options=approval_options(event.tool, event.kind))
        except (RequestError, ConnectionError):  # withdrawn (-32800), or the client is gone
            return
        finally:
            self.ids.done(self.session_id, event.call_id)
        if event.approval_id in self.resolved:
            return  # another front end answered first: the cancelled outcome is the withdrawal's answer
        await self.h.submit(Answer(event.approval_id, decision_of(response.outcome)))  # refused: answered first

    async def _review(self, event: ev.PlanDecisionRequired) -> None:
        call = review_call(event)
        self.stream.send(start_tool_call(call.tool_call_id, call.title or "", kind="think", status="pending"))
        await self.stream.flush()
        try:
            response = await self.conn.request_permission(session_id=self.session_id, tool_call=call,
                                                          options=review_options(event.kind))
            chosen = review_decision(event.kind, response.outcome)
        except (RequestError, ConnectionError):
            chosen = "stop"
        self.stream.send(update_tool_call(call.tool_call_id, status="failed" if chosen == "stop" else "completed"))
        await self.h.submit(PlanDecision("abort" if chosen == "stop" else chosen))

    # -- requests ---------------------------------------------------------------------------
    async def prompt(self, blocks: list[Any]) -> PromptResponse:
        if self.turn is not None and not self.turn.done():
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        text = await prompt_text(blocks, _reader(self.h, self.root))
        with tempfile.TemporaryDirectory(prefix="coder-tui-acp-") as folder:
            images = self._images(blocks, Path(folder))
            for note in self.notes:
                self.events.handle(ev.WarningEvent(message=note))
            self.notes.clear()
            self.turn = asyncio.ensure_future(self.h.submit(Prompt(text, images)))
            reply = await self.turn
        await self.stream.flush()
        return self._response(reply)

    def _images(self, blocks: list[Any], folder: Path) -> tuple[str, ...]:
        """The prompt's images, checked, as files the handle reads (ImageError: invalid params)."""
        try:
            images = prompt_images(blocks)
            if images:
                editor.check_images(self.h)
        except ImageError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        paths = []
        for number, image in enumerate(images, 1):
            path = folder / f"image-{number}.{image.format}"
            path.write_bytes(image.data)
            paths.append(str(path))
        return tuple(paths)

    def _response(self, reply: Reply) -> PromptResponse:
        if not reply.ok:
            if reply.kind == "unavailable":
                raise RequestError(-32603, f"{reply.error}; session/load the session again")
            raise RequestError.invalid_params({"message": str(reply.error)})
        if reply.stopped:  # stopped, or dropped by a stop before it ran: answered all the same
            return PromptResponse(stop_reason="cancelled")
        reason = str(reply.data.get("completion_reason"))
        if reason == "error" or reply.data.get("error"):
            from agent.secrets import redact

            problem = self.events.problem or reply.data.get("error") or "the turn failed"
            raise RequestError(-32603, redact(str(problem)))
        return PromptResponse(stop_reason=STOP_REASONS.get(reason, "end_turn"))

    def advertise_commands(self) -> None:
        """The custom commands (agent/custom/commands.py) as the client's available commands (a
        session in the host runs typed `/name` prompts itself)."""
        from acp.schema import AvailableCommand, AvailableCommandsUpdate, UnstructuredCommandInput

        commands = list(editor.custom_commands(self.h))
        if not commands:  # nothing to offer: the client's list stays empty
            return
        self.stream.send(AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[
            AvailableCommand(name=c.name, description=c.description or c.name,
                             input=UnstructuredCommandInput(hint=c.file.argument_hint) if c.file.argument_hint else None)
            for c in sorted(commands, key=lambda c: c.name)]))

    def cancel(self) -> None:
        asyncio.get_running_loop().create_task(self.h.submit(Stop()))

    async def set_mode(self, mode: str) -> None:
        """session/set_mode: the session's mode from its next turn on (the other front ends are told)."""
        if mode not in MODES:
            raise RequestError.invalid_params({"modeId": mode, "message": "modes are plan, ask and allow"})
        reply = await self.h.submit(SetMode(mode))  # type: ignore[arg-type]
        if not reply.ok:
            raise RequestError.invalid_params({"modeId": mode, "message": str(reply.error)})

    async def close(self) -> None:
        """Leave: a run in this process stops and records its end; one in the host goes on for the others."""
        for task in self.asking.values():
            task.cancel()
        if self.following is not None:
            self.following.cancel()
        if self.handle is not None:
            await self.handle.close(detach=True)
        await self.stream.close()


def _reader(handle: SessionHandle, root: Path) -> Any:
    """The workspace mentioned files are read from: the session's own (this process), else the folder."""
    workspace = editor.workspace(handle)
    if workspace is not None:
        return workspace
    from agent.workspaces.local import LocalWorkspace

    return LocalWorkspace(root)
