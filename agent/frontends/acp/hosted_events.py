"""The host's lines as ACP updates, for a session joined in the session host (agent/frontends/acp/hosted.py).

The events are mapped as an in-process session's are (AcpEvents); what differs: the session so far
arrives as events too (a resumed session's recorded ones carry no streamed text, so a run's
final answer is shown when no text came), a tool call's diffs come as `file_changed` events (the
host writes the files, not the editor), and the tool kinds come from the built-in tools' table.
Other front ends' prompts are user message chunks; the permission requests are hosted.py's.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from acp import text_block, tool_content, update_agent_message_text, update_tool_call, update_user_message_text

from agent import events as ev
from agent.frontends.acp.events import OUTPUT_SHOWN, AcpEvents
from agent.frontends.acp.permission import command_content
from agent.frontends.acp.prompt import typed_part
from agent.frontends.acp.updates import UpdateStream
from agent.textsafe import line as shown_line

DECIDED = {"allow_once": "allowed", "allow_all": "allowed for the session", "deny": "rejected", "stop": "stopped"}


@functools.cache
def _builtin_kinds() -> dict[str, str]:
    from agent.tools import default_tools

    return {tool.name: tool.kind for tool in default_tools()}


def builtin_kind(name: str) -> str | None:
    """A tool's approval kind without the session's registry (the host has it): built-ins, MCP's network."""
    return "network" if name.startswith("mcp__") else _builtin_kinds().get(name)


class HostedEvents(AcpEvents):
    """AcpEvents for a session that runs in the host; `mine` says whether the running turn is this client's."""

    def __init__(self, stream: UpdateStream, root: Path | None) -> None:
        super().__init__(stream, root, builtin_kind)
        self.mine = False  # the running turn was prompted here (its prompt is on the client's screen already)
        self.texted = False  # the run streamed text
        self.diffs: dict[str, list[str]] = {}  # call id -> the diffs of the files it changed
        self.titles: dict[str, str] = {}  # call id -> its title (said again with who answered its approval)
        self._call: str | None = None

    def on_run_started(self, event: ev.RunStarted) -> None:
        super().on_run_started(event)
        self.texted = False
        if not self.mine and event.prompt.strip():
            self.stream.send(update_user_message_text(typed_part(event.prompt)))

    def on_text_delta(self, event: ev.TextDelta) -> None:
        self.texted = self.texted or bool(event.text)
        super().on_text_delta(event)

    def on_complete(self, event: ev.Complete) -> None:
        super().on_complete(event)
        if not self.texted and event.completion_reason == "answered" and event.final_response.strip():
            self.stream.send(update_agent_message_text(self.turns.text(event.final_response)))

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        super().on_tool_call(event)
        self._call = event.call_id
        self.titles[event.call_id] = shown_line(event.tool)  # replaced by the approval's title when one is asked

    def on_file_changed(self, event: ev.FileChanged) -> None:
        if self._call is not None:
            self.diffs.setdefault(self._call, []).append(event.diff)

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        self._call = None
        diffs = self.diffs.pop(event.call_id, [])
        if not diffs:
            super().on_tool_result(event)
            return
        shown = [f"```diff\n{diff}```"[: OUTPUT_SHOWN] for diff in diffs]
        self.stream.send(update_tool_call(event.call_id, status="completed" if event.ok else "failed",
                                          content=[tool_content(text_block(s)) for s in shown]))

    def answered(self, call_id: str, decision: str, by: str) -> None:
        """The tool call says who answered its approval (any front end of the session)."""
        title = self.titles.get(call_id, "tool call")
        self.stream.send(update_tool_call(call_id, title=f"{title} ({DECIDED.get(decision, decision)} by "
                                                         f"{shown_line(by)})"))


def approval_content(event: ev.ApprovalRequired) -> list[Any] | None:
    """What the user decides on: the diffs of an edit, the whole command, the address."""
    if event.files:
        return [tool_content(text_block(f"```diff\n{f.diff}```")) for f in event.files]
    return command_content(event.command, event.args, event.url)
