"""The app's session when it is attached to a session that lives in the session host (agent/host).

`HostSession` is what the bridge drives in place of an in-process AgentSession (tui/ports.py
`RemoteSession`): prompts go to the host (queued behind a running turn), stop stops the host's run,
detach leaves it going. Its lines come back in the `run --json` shapes: parsed into the typed
events of agent/events.py for the presenter; the host's own lines (whose turn starts, who answered
an approval, who joined) become chat lines. An approval opens the app's approval panel; when
another front end answers first the panel closes and a line says who answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent import events as ev
from agent.client.commands import Answer, Note, Prompt, Stop
from agent.client.hosted import HOST_TYPES, HostClient, HostedHandle
from agent.textsafe import line as safe_line

if TYPE_CHECKING:
    from agent.approval import ApprovalRequest, Decision
    from agent.diffing import FileChange
    from tui.ports import SessionHost

Sink = Callable[[ev.Event], None]  # the app's way in for events (its presenter)


class HostSession:
    def __init__(self, client: HostClient, host: SessionHost, sink: Sink, name: str | None = None) -> None:
        self.client, self.host, self.sink = client, host, sink
        self.name = name or f"coder-tui app (pid {os.getpid()})"
        self.session_id = ""
        self.workspace = ""
        self.mode = "ask"
        self.model = ""
        self.pending: list[str] = []  # approval ids waiting when the replay ended
        self.others: list[str] = []  # the clients attached when we joined
        self.lost: Callable[[str], None] | None = None  # told a one-line reason when the host goes away
        self._tickets: set[int] = set()  # turns running or queued in the host
        self._done: set[int] = set()
        self._sending = 0  # our prompts sent, their ticket not yet known
        self._unshown: list[str] = []  # our prompts queued behind a turn: shown when they start
        self._asking: dict[str, asyncio.Task[None]] = {}
        self._follow: asyncio.Task[None] | None = None
        self._leaving = False
        self.handle: HostedHandle | None = None
        self._early: list[object] | None = []  # items between the replay and `follow`

    # -- opening --------------------------------------------------------------------------
    async def open(self, ref: str, options: dict[str, Any]) -> list[dict[str, Any]]:
        """Open or join session `ref` in the host; returns the session so far (its replay lines).
        HostRefused with the host's reason; ConnectionError when the host goes away meanwhile."""
        self.handle = handle = await HostedHandle.open(self.client, ref, self.name, options)
        self.session_id, self.workspace = handle.session_id, handle.workspace_label
        self.mode, self.model = handle.mode, str(handle.model)
        handle.listen(self._listen)
        replay = [_data(item) for item in handle.history()]
        self.pending, self.others = handle.pending, list(handle.state.get("clients", []))
        if handle.state.get("running") or handle.state.get("queued"):
            self._tickets.update(_open_tickets(replay))
        return replay

    def follow(self) -> None:
        """The live stream from here on (and the approvals that wait now)."""
        early, self._early = self._early or [], None
        for item in early:
            self.show(_data(item))
        assert self.handle is not None
        self._follow = asyncio.get_running_loop().create_task(self._watch(self.handle), name="host-follow")

    def _listen(self, item: object) -> None:
        if self._early is not None:
            self._early.append(item)
        else:
            self.show(_data(item))

    @property
    def root(self) -> Path | None:
        path = Path(self.workspace).expanduser()
        return path if path.is_absolute() and path.is_dir() else None

    # -- what the bridge drives (tui/ports.py RemoteSession) -------------------------------
    @property
    def running(self) -> bool:
        return bool(self._tickets) or self._sending > 0

    def submit(self, text: str, mentions: list[str]) -> str:
        """Send a prompt (the @-mentioned files appended, as in-process): "started", or "host-queued"
        when a turn runs (it is shown when it starts)."""
        queued = self.running
        if queued:
            self._unshown.append(text)
        self._sending += 1
        self._spawn(self._prompt(text, mentions))
        return "host-queued" if queued else "started"

    async def _prompt(self, text: str, mentions: list[str]) -> None:
        assert self.handle is not None
        try:
            reply = await self.handle.submit(Prompt(await self._with_files(text, mentions)))
        finally:
            self._sending -= 1
        if not reply.ok and reply.kind != "unavailable":  # gone: the watcher says the host is gone
            self.host.notice(f"Not sent (Up recalls it): {reply.error}", "warning")
            if text in self._unshown:
                self._unshown.remove(text)

    async def _with_files(self, text: str, mentions: list[str]) -> str:
        if not mentions:
            return text
        from agent.attachments import attach_mentions
        from agent.workspaces.base import WorkspaceError
        from agent.workspaces.local import LocalWorkspace

        try:
            workspace = LocalWorkspace(str(self.root or self.workspace))
        except WorkspaceError as exc:
            self.host.notice(f"the mentioned files were not attached: {exc}", "warning")
            return text
        prompt, unread = await attach_mentions(workspace, text, mentions)
        for problem in unread:
            self.host.notice(problem, "warning")
        return prompt

    def stop(self) -> bool:
        self._spawn(self._request(Stop()))
        return True

    async def _request(self, command: Stop | Answer) -> None:
        assert self.handle is not None
        reply = await self.handle.submit(command)
        if not reply.ok and reply.kind != "unavailable":
            self.host.notice(f"{'stop' if isinstance(command, Stop) else 'approve'}: {reply.error}", "warning")

    async def detach(self) -> None:
        """Leave the session (its run goes on in the host) and close the connection."""
        self._leaving = True
        for task in self._asking.values():
            task.cancel()
        if self.handle is not None:
            await self.handle.close(detach=True)
        else:
            await self.client.close()
        if self._follow is not None:
            self._follow.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follow

    # -- the stream -----------------------------------------------------------------------
    def show(self, line: dict[str, Any], live: bool = True) -> None:
        """One line from the host: an event for the presenter, or a host line for the chat."""
        if line.get("type") in HOST_TYPES:
            self._host_line(line, live)
            return
        try:
            event = ev.parse_event(line)
        except ValueError:
            return  # a shape from another version: nothing to show
        if isinstance(event, ev.ApprovalRequired) and (live or event.approval_id in self.pending):
            self._ask(event)
        elif isinstance(event, ev.ApprovalResolved) and (task := self._asking.pop(event.approval_id, None)):
            task.cancel()  # answered elsewhere: the panel closes
        self.sink(event)

    async def _watch(self, handle: HostedHandle) -> None:
        await handle.lost.wait()
        if not self._leaving:
            self._tickets.clear()
            if self.lost is not None:
                self.lost(f"The session host stopped (connection lost); session {self.session_id} is recorded "
                          "up to its last event")

    def _host_line(self, line: dict[str, Any], live: bool) -> None:
        kind, by = line["type"], str(line.get("by", ""))
        mine = by == self.name
        if kind == "prompt_queued":
            self._tickets.add(line["ticket"])
            if mine:
                self.host.notice(f"Queued in the session host behind {line['ahead']} turn(s); it runs when they "
                                 "end. Esc stops the running turn and drops what is queued: your prompt comes "
                                 "back to the input.", "dim")
            else:
                self.host.notice(f"{safe_line(by)} queued: {safe_line(line['prompt'])}", "dim")
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

    def _dropped(self, line: dict[str, Any], by: str) -> None:
        """A stop dropped the prompts queued behind the run (the host's `prompts_dropped`)."""
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
        if event.approval_id in self._asking:
            return
        self._asking[event.approval_id] = self._spawn(self._answer(event))

    async def _answer(self, event: ev.ApprovalRequired) -> None:
        request = approval_request(event, self.root)
        try:
            decision = await self.host.ask_approval(request)
        finally:
            self._asking.pop(event.approval_id, None)
        await self._request(Answer(event.approval_id, decision.decision, decision.feedback, decision.rejected_hunks,
                                   decision.edited))

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(work)


def key_argument(args: dict[str, Any]) -> str:
    """The argument a tool row shows when the tools are the host's (agent/tools/base.py's choice)."""
    from agent.tools.base import Tool

    return Tool.key_argument(cast("Tool", None), args)  # it reads only the arguments


def _open_tickets(replay: list[dict[str, Any]]) -> set[int]:
    tickets: set[int] = set()
    for line in replay:
        if line.get("type") in ("prompt_queued", "turn_started"):
            tickets.add(line["ticket"])
        elif line.get("type") == "turn_done":
            tickets.discard(line["ticket"])
    return tickets


def approval_request(event: ev.ApprovalRequired, root: Path | None) -> ApprovalRequest:
    """The panel's request from the event: each file's change rebuilt from the workspace and its
    diff (the hunks the panel numbers are the session's), or none when it cannot be rebuilt."""
    from agent.approval import ApprovalRequest

    details = {name: getattr(event, name) for name in ev.ApprovalDetails.model_fields}
    changes = [rebuilt(root, preview) for preview in event.files] if root is not None else []
    return ApprovalRequest(**details, changes=[c for c in changes if c is not None])


def rebuilt(root: Path, preview: ev.FilePreview) -> FileChange | None:
    """The change a preview shows, exactly (its diff rebuilt from it is the preview's), or None."""
    from agent.diffing import FileChange

    old: str | None = None
    if not preview.created:
        try:
            old = (root / preview.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    new = None if preview.deleted else _applied(old or "", preview.diff, preview.path)
    if new is None and not preview.deleted:
        return None
    change = FileChange(preview.path, old, new)
    return change if change.unified_diff() == preview.diff else None


def _applied(old: str, diff: str, path: str) -> str | None:
    from tui.widgets.diffmodel import parse_unified

    files = parse_unified(diff, path)
    if len(files) != 1:
        return None
    old_lines, out, at = old.splitlines(keepends=True), [], 0
    for hunk in files[0].hunks:
        out += old_lines[at:hunk.old_start]
        out += [d.text + ("" if d.no_newline else "\n") for d in hunk.lines if d.tag != "removed"]
        at = hunk.old_start + hunk.old_len
    return "".join(out + old_lines[at:])


def _data(item: object) -> dict[str, Any]:
    """A handle's item as the host's line (the shapes `show` and the replay read)."""
    return dict(item.data) if isinstance(item, Note) else item.model_dump(mode="json")  # type: ignore[attr-defined]
