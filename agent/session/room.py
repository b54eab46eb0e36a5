"""The agent in a room: answers every trigger, one at a time, in the order they came.

While it answers a document trigger, the agent's cursor (its awareness selection, as every peer
shows itself: agent/oct/presence.py) sits at the start of the prompt line; nothing is written into
the document for it. The model gets the prompt and the document with line numbers (windowed when
long); the view is snapshotted so that its edits land where it meant them. Chat triggers are
answered with a chat message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.events import ErrorEvent, TriggerEvent, WarningEvent
from agent.oct.approvals import RoomApprovals
from agent.oct.client import RoomClient
from agent.oct.planchat import PlanChat
from agent.oct.presence import selection
from agent.oct.textpos import line_starts
from agent.oct.triggers import Trigger
from agent.oct.watcher import TriggerWatcher
from agent.oct.windowing import DocumentView, view_document
from agent.workspaces.room import RoomWorkspace

if TYPE_CHECKING:
    from agent.session.core import AgentSession

log = logging.getLogger(__name__)

DOCUMENT_PROMPT = """{who} asked you in the shared document {path}, on line {line}: "{prompt}"

{header}:
{body}

Do what they asked in {path} with the edit tools; the line numbers above are the document's. \
Other people may be typing in this document right now: an edit whose lines changed meanwhile is \
refused, and then you read those lines again and redo it. Leave the request line itself in place \
unless they asked you to change it. When you are done, answer in one or two sentences."""

CHAT_PROMPT = """{who} asked you in the room's chat: "{prompt}"
{context}
Your final answer is sent back to the chat, so keep it short and plain (no Markdown tables)."""

LOCAL_PROMPT = """The person running coder-tui beside you in this room asked: "{prompt}"
{context}
Work in the room's shared documents; answer them directly when you are done."""


TASK_TOOLS = frozenset({"schedule_task", "cancel_task", "list_tasks"})


def peer_refusal(tool: Any, settings: Any) -> str | None:
    """Why a room participant's request may not use `tool` (None: it may), by the `[room]` settings."""
    def refused(what: str, key: str) -> str:
        return (f"{tool.name} is not available for requests from room participants: {what} runs on the "
                f"operator's machine and accounts (the operator can allow it with `{key} = true` under "
                "[room] in their config.toml)")

    if getattr(tool, "mcp_server", None) is not None and not getattr(settings, "allow_mcp", False):
        return refused("an MCP server's tool", "allow_mcp")
    if tool.name in TASK_TOOLS and not getattr(settings, "allow_tasks", False):
        return refused("a scheduled task", "allow_tasks")
    if tool.kind == "network" and not getattr(settings, "allow_network", False):
        return refused("network access", "allow_network")
    return None


@dataclass
class _Job:
    trigger: Trigger
    direct: bool = False  # a direct chat message: answer only its sender


class RoomAgent:
    def __init__(self, client: RoomClient, workspace: RoomWorkspace, session: AgentSession,
                 emit: Callable[[Any], None], name: str, approvers: Sequence[str] = ()) -> None:
        assert client.docs is not None
        self.client, self.workspace, self.name = client, workspace, name
        self.approvers = list(approvers)  # `--approver NAME`, besides the config's [room] approvers
        self.bind(session, emit)
        self.queue: asyncio.Queue[_Job] = asyncio.Queue()
        self.watcher = TriggerWatcher(client.docs, name, self._on_trigger)
        self.answered = 0
        self.ready = asyncio.Event()  # set once the model library is loaded
        client.chat_listeners.append(self._on_chat)

    def bind(self, session: AgentSession, emit: Callable[[Any], None]) -> None:
        """Answer for `session` (a new one after /clear or /resume too); its approvals are shown to
        the room as proposals, answered from the chat or locally, whichever comes first."""
        self.session, self.emit = session, emit
        gate = session.gate
        if not isinstance(gate.approver, RoomApprovals):
            gate.approver = RoomApprovals(gate.approver, self.client, self.name, self._allowed)
        self.approvals: RoomApprovals = gate.approver

    def _allowed(self) -> list[str]:
        """Who may answer proposals from the chat: the config's `[room] approvers` and `--approver`."""
        settings = getattr(getattr(self.session, "config", None), "room", None)
        return [*getattr(settings, "approvers", []), *self.approvers]

    # -- intake -------------------------------------------------------------------------
    def _on_trigger(self, trigger: Trigger) -> None:
        self._enqueue(_Job(trigger))

    def _on_chat(self, origin: str, text: str, direct: bool) -> None:
        if origin == self.client.status.peer_id:
            return
        trigger = self.watcher.chat(origin, text)
        if trigger is not None and self.approvals.answer(origin, trigger.prompt, direct):
            return  # `@agent yes` / `@agent no ...`: an answer to a proposal, not a prompt
        if trigger is not None:
            self._enqueue(_Job(trigger, direct=direct))

    def ask(self, prompt: str) -> None:
        """A prompt typed into coder-tui itself: answered in turn with the room's own triggers."""
        self._enqueue(_Job(Trigger(source="local", prompt=prompt, origin=self.client.status.peer_id or "")))

    def _enqueue(self, job: _Job) -> None:
        self.client.status.queue.append(self._label(job.trigger))
        self.queue.put_nowait(job)
        self.client.publish("queue", len(self.client.status.queue))

    def _who(self, origin: str) -> str:
        status = self.client.status
        for peer in status.everyone():
            if peer.id == origin:
                return peer.name or "someone"
        return "Someone"

    def _label(self, trigger: Trigger) -> str:
        return f"{trigger.where}: {trigger.prompt[:60]}"

    def stop(self, by: str = "the person running coder-tui") -> int:
        """A stop: the running turn ends and every prompt waiting behind it is dropped, each
        answered so that nobody waits for it: a peer's chat message in the chat (to them alone if
        it was direct), a document prompt in the chat naming where it is. Returns how many were dropped."""
        dropped: list[_Job] = []
        while not self.queue.empty():
            dropped.append(self.queue.get_nowait())
        self.client.status.queue.clear()
        for job in dropped:
            trigger = job.trigger
            if trigger.source == "local":
                continue  # typed here: the app said so, and put nothing back in anyone's way
            what = f"your request {trigger.prompt[:60]!r}" if trigger.source == "chat" else \
                f"the request at {trigger.where} ({trigger.prompt[:60]!r})"
            self.client.send_chat(f"Stopped by {by} before it ran: {what}. Ask again to have it answered.",
                                  to=trigger.origin if job.direct else None)
        if dropped:
            self.client.publish("queue", 0)
            self.emit(WarningEvent(message=f"the stop dropped {len(dropped)} queued request(s); the room was told"))
        self.session.stop()
        return len(dropped)

    # -- answering ------------------------------------------------------------------------
    async def run(self) -> None:
        """Answer triggers until cancelled."""
        # A model on the litellm path: import litellm off the event loop now, so that the first
        # trigger is not held up by a second-long import inside the first run.
        from agent.llm.preload import start_loading, warm_for

        config = self.session.config
        if warm_for(config.model, config.api_base, config.model_path):
            await asyncio.wrap_future(start_loading())
        self.ready.set()
        while True:
            job = await self.queue.get()
            status = self.client.status
            status.working_on = status.queue.pop(0) if status.queue else self._label(job.trigger)
            status.last_trigger = status.working_on
            try:
                await self._answer(job)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one failed answer must not end the room session
                log.exception("answering a trigger failed")
                self.emit(ErrorEvent(message=f"could not answer {self._label(job.trigger)}: {exc}"))
            finally:
                await self._finish(job)

    async def _finish(self, job: _Job) -> None:
        path = job.trigger.path or self.client.status.followed
        if path and self.client.docs is not None:  # still in the document, no longer at its prompt
            self.client.docs.set_selection(selection(path))
        self.client.status.working_on = None
        self.answered += 1
        self.client.publish("queue", len(self.client.status.queue))

    async def _answer(self, job: _Job) -> None:
        trigger = job.trigger
        view = self._document_view(trigger)
        if trigger.source == "document" and view is not None:
            prompt = DOCUMENT_PROMPT.format(who=self._who(trigger.origin), path=trigger.path,
                                            line=view[1], prompt=trigger.prompt,
                                            header=view[0].header(), body=view[0].body)
        else:
            context = f"\n{view[0].header()}:\n{view[0].body}\n" if view else ""
            template = LOCAL_PROMPT if trigger.source == "local" else CHAT_PROMPT
            prompt = template.format(who=self._who(trigger.origin), prompt=trigger.prompt, context=context)
        by = "you" if trigger.source == "local" else self._who(trigger.origin)
        self.emit(TriggerEvent(source=trigger.source, prompt=trigger.prompt, path=trigger.path,
                               line=view[1] if view and trigger.source == "document" else None,
                               by=by, queued=self.queue.qsize(), document=view[0].body if view else ""))
        self._show_presence(trigger)
        to = trigger.origin if job.direct else None
        relay = PlanChat(lambda text: self.client.send_chat(text, to=to))
        with relay.attached(self.session), self._limited(trigger.source != "local"):
            complete = await self.session.run(prompt)  # a plan, and its steps as they finish, in the chat
        if trigger.source == "chat":
            answer = complete.final_response.strip() or "(no answer)"
            self.client.send_chat(answer, to=trigger.origin if job.direct else None)

    @contextmanager
    def _limited(self, peer: bool) -> Iterator[None]:
        """While a room participant's request runs, only the tools the room's settings grant them."""
        executor = getattr(self.session, "executor", None)
        if not peer or executor is None:
            yield
            return
        settings = getattr(getattr(self.session, "config", None), "room", None)
        before = executor.limit
        executor.limit = lambda tool: peer_refusal(tool, settings)
        try:
            yield
        finally:
            executor.limit = before

    def _document_view(self, trigger: Trigger) -> tuple[DocumentView, int] | None:
        """The document shown with the prompt, and the prompt's 1-based line in it."""
        path = trigger.path or self.client.status.followed
        if path is None or not self.workspace.has_shared(path):
            return None
        text = self.workspace.show(path)
        line = 0
        if trigger.path is not None and trigger.anchor is not None:
            assert self.client.docs is not None
            raw = str(self.client.docs.text(path)).encode("utf-8")
            line = raw.count(b"\n", 0, trigger.anchor.resolve())
        starts = line_starts(text)
        focus = starts[min(line, len(starts) - 1)]
        return view_document(path, text, focus), line + 1

    def _show_presence(self, trigger: Trigger) -> None:
        """Tell the others where we work: the document, and our cursor at its prompt line."""
        docs = self.client.docs
        path = trigger.path or self.client.status.followed
        if not path or docs is None:
            return
        if trigger.path is not None and trigger.anchor is not None:
            docs.set_selection(selection(path, docs.text(path), trigger.anchor.resolve()))
        else:
            docs.set_selection(selection(path))

