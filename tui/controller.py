"""The app's one driver of a `SessionHandle` (agent/client): what the user does becomes a command,
and what the handle sends (the session's events, its `Note`s) becomes what the app shows.

Prompts queue behind a running turn (this app's or another front end's) and each is shown when it
starts; Esc stops the running turn and drops what is queued (this app's dropped prompt goes back
into the input); an approval opens the approval panel, and when another front end answers first
the panel closes and a line says who answered. The handle's items end when it goes away: the app
is told once (`lost`) unless it left the session itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent import events as ev
from agent.client.commands import MODES, Answer, Command, Mode, Note, Prompt, SetMode, Stop
from agent.textsafe import line as safe_line

if TYPE_CHECKING:
    from agent.client.handle import SessionHandle
    from tui.ports import SessionHost

Sink = Callable[[ev.Event], None]  # the app's way in for events (its presenter)


class HandleController:
    def __init__(self, handle: SessionHandle, host: SessionHost, sink: Sink, *, workspace: str = "",
                 model: str = "", others: list[str] | None = None) -> None:
        self.handle, self.host, self.sink = handle, host, sink
        self.workspace, self.model = workspace, model
        self.others = list(others or [])  # the clients attached when we joined
        self.lost: Callable[[str], None] | None = None  # told a one-line reason when the handle goes away
        self._tickets: set[int] = set()  # turns running or queued
        self._done: set[int] = set()
        self._sending = 0  # our prompts sent, their ticket not yet known
        self._unshown: list[str] = []  # our prompts queued behind a turn: shown when they start
        self._asking: dict[str, asyncio.Task[None]] = {}
        self._follow: asyncio.Task[None] | None = None
        self._leaving = False
        self._early: list[object] | None = []  # items between the replay and `follow`
        self._stream = handle.events()  # registered now: nothing between the replay and `follow` is lost
        handle.listen(self._listen)

    # -- the session ----------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self.handle.session_id

    @property
    def mode(self) -> str:
        return self.handle.mode

    @property
    def name(self) -> str:
        return self.handle.name

    @property
    def pending(self) -> list[str]:
        return self.handle.pending

    @property
    def root(self) -> Path | None:
        """The session's folder on this machine (its files for @ completion, the approval panel's
        changes), if it is one."""
        path = Path(self.workspace).expanduser()
        return path if path.is_absolute() and path.is_dir() else None

    @property
    def running(self) -> bool:
        """A turn runs or waits (this app's or another front end's)."""
        return bool(self._tickets) or self._sending > 0

    @property
    def following(self) -> bool:
        return self._follow is not None

    def history(self, busy: bool = True) -> list[object]:
        """The session so far (replayed when the app joins it); `busy`: a turn runs or waits as it
        joins (the tickets the replay leaves open are running), else none is."""
        items = self.handle.history()
        if busy:
            self._tickets.update(self._open_tickets(items))
        return items

    @staticmethod
    def _open_tickets(items: list[object]) -> set[int]:
        tickets: set[int] = set()
        for item in items:
            if isinstance(item, Note) and item.type in ("prompt_queued", "turn_started"):
                tickets.add(item.data["ticket"])
            elif isinstance(item, Note) and item.type == "turn_done":
                tickets.discard(item.data["ticket"])
        return tickets

    def follow(self) -> None:
        """The live stream from here on (and the approvals that wait now)."""
        early, self._early = self._early or [], None
        for item in early:
            self.show(item)
        self._follow = asyncio.get_running_loop().create_task(self._watch(), name="handle-follow")

    def _listen(self, item: object) -> None:
        if self._early is not None:
            self._early.append(item)
        else:
            self.show(item)

    async def _watch(self) -> None:
        async for _item in self._stream:
            pass  # shown by the listener, as each comes; the stream says when the handle is gone
        if not self._leaving:
            self._tickets.clear()
            if self.lost is not None:
                self.lost(f"The session host stopped (connection lost); session {self.session_id} is recorded "
                          "up to its last event")

    # -- what the user does -----------------------------------------------------------------
    def submit(self, text: str, mentions: list[str]) -> str:
        """Send a prompt (the session attaches the @-mentioned files): "started", or "host-queued" when
        a turn runs (it is shown when it starts)."""
        queued = self.running
        if queued:
            self._unshown.append(text)
        self._sending += 1
        self._spawn(self._prompt(text, mentions))
        return "host-queued" if queued else "started"

    async def _prompt(self, text: str, mentions: list[str]) -> None:
        try:
            reply = await self.handle.submit(Prompt(text, mentions=tuple(mentions)))  # attached where it runs
        finally:
            self._sending -= 1
        if not reply.ok and reply.kind != "unavailable":  # gone: the watcher says so
            self.host.notice(f"Not sent (Up recalls it): {reply.error}", "warning")
            if text in self._unshown:
                self._unshown.remove(text)

    def stop(self) -> bool:
        self._spawn(self._request(Stop(), "stop"))
        return True

    def set_mode(self, mode: str) -> None:
        if mode in MODES:
            self._spawn(self._request(SetMode(cast("Mode", mode)), "mode"))

    async def _request(self, command: Command, what: str) -> None:
        reply = await self.handle.submit(command)
        if not reply.ok and reply.kind != "unavailable":
            self.host.notice(f"{what}: {reply.error}", "warning")

    async def detach(self) -> None:
        """Leave the session (a run in the session host goes on for the other front ends)."""
        self._leaving = True
        for task in list(self._asking.values()):
            task.cancel()
        await self.handle.close(detach=True)
        if self._follow is not None:
            self._follow.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follow

    # -- what the handle sends ----------------------------------------------------------------
    def show(self, item: object, live: bool = True) -> None:
        """One item: an event for the presenter, or a note for the chat."""
        if isinstance(item, Note):
            self._note(item.type, item.data, live)
            return
        if isinstance(item, ev.ApprovalRequired) and (live or item.approval_id in self.pending):
            self._ask(item)
        elif isinstance(item, ev.ApprovalResolved) and (task := self._asking.pop(item.approval_id, None)):
            task.cancel()  # answered elsewhere: the panel closes
        self.sink(cast("ev.Event", item))  # a handle's items are its Notes and the session's events

    def _note(self, kind: str, line: dict[str, Any], live: bool) -> None:
        by = str(line.get("by", ""))
        mine = by == self.name
        if kind == "prompt_queued":
            self._tickets.add(line["ticket"])
            self._queued(line, by, mine)
        elif kind == "turn_started":
            if line["ticket"] not in self._done:
                self._tickets.add(line["ticket"])
            if not mine:
                self.host.show_prompt_of(str(line["prompt"]), by)
            elif self._unshown and live:
                self.host.show_prompt_of(self._unshown.pop(0), "you")
        elif kind == "turn_done":
            self._tickets.discard(line["ticket"])
            self._done.add(line["ticket"])
            if line.get("error"):
                self.host.notice(f"the turn of {safe_line(by)} failed in the session host: "
                                 f"{safe_line(line['error'])}", "error")
        elif kind == "prompts_dropped":
            self._dropped(line, by)
        elif kind == "mode_changed" and not mine:
            self.host.notice(f"{safe_line(by)} set the mode to {safe_line(str(line.get('mode')))}.", "info")
        elif kind == "approval_answered" and not mine:
            self.host.notice(f"Approval answered by {safe_line(by)} ({line['decision']}).", "info")
        elif kind in ("client_joined", "client_left") and live and line["client"] != self.name:
            verb = "attached" if kind == "client_joined" else "left"
            self.host.notice(f"{safe_line(str(line['client']))} {verb}", "dim")

    def _queued(self, line: dict[str, Any], by: str, mine: bool) -> None:
        if mine:
            self.host.notice(f"Queued in the session host behind {line['ahead']} turn(s); it runs when they "
                             "end. Esc stops the running turn and drops what is queued: your prompt comes "
                             "back to the input.", "dim")
        else:
            self.host.notice(f"{safe_line(by)} queued: {safe_line(line['prompt'])}", "dim")

    def _dropped(self, line: dict[str, Any], by: str) -> None:
        """A stop dropped the prompts queued behind the run (`prompts_dropped`)."""
        prompts = line.get("prompts") or []
        for item in prompts:
            self._tickets.discard(item["ticket"])
            self._done.add(item["ticket"])
            if item.get("by") == self.name and self._unshown:
                self.host.restore_prompt(self._unshown.pop(0))  # ours, never started: back in the input
        listed = "; ".join(f"{safe_line(str(p.get('by')))}: {safe_line(str(p.get('prompt')))}" for p in prompts)
        self.host.notice(f"Stopped by {safe_line(by)}: the queued prompt{'s' if len(prompts) != 1 else ''} "
                         f"did not run ({listed}).", "info")

    # -- approvals ------------------------------------------------------------------------
    def _ask(self, event: ev.ApprovalRequired) -> None:
        if event.approval_id not in self._asking:
            self._asking[event.approval_id] = self._spawn(self._answer(event))

    async def _answer(self, event: ev.ApprovalRequired) -> None:
        from tui.rebuild import approval_request

        try:
            decision = await self.host.ask_approval(approval_request(event, self.root))
        finally:
            self._asking.pop(event.approval_id, None)
        await self._request(Answer(event.approval_id, decision.decision, decision.feedback, decision.rejected_hunks,
                                   decision.edited), "approve")

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(work)
