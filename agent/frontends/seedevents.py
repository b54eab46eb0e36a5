"""Seed 003's event shapes, for clients written against that seed (`serve ?events=seed`,
`run --json-format seed`, the WebSocket with `"events": "seed"`).

    text_chunk          {content}
    agent_step          {iteration, thought, tool_calls, tool_results, response_text, is_complete}
    approval_required   {approval_id, tool_name, tool_parameters}
    complete            {success, iterations, final_response, completion_reason}
    error               {error}

An `agent_step` aggregates one model request and what its tool calls did: it is sent when the next
request starts or the run completes. `thought` is the model's reasoning when it streams any, else
the step's text when the step called tools (what it said before acting); `response_text` is the
step's text. Our other events (diffs, plans, usage...) have no seed shape and are not sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agent import events as ev
from agent.consumer import EventHandler
from agent.secrets import redact
from agent.textsafe import json_line

Data = dict[str, Any]
FORMATS = ("ours", "seed")


class SeedMapper(EventHandler):
    """Turns events into seed 003's data objects handed to `send`."""

    def __init__(self, send: Callable[[Data], None]) -> None:
        self.send = send
        self._step: Data | None = None
        self._thought: list[str] = []

    def _open(self, iteration: int) -> Data:
        self._thought = []
        return {"type": "agent_step", "iteration": iteration, "thought": "", "tool_calls": [],
                "tool_results": [], "response_text": "", "is_complete": False}

    def _flush(self, complete: bool = False) -> None:
        step, self._step = self._step, None
        if step is None:
            return
        reasoning = "".join(self._thought)
        step["thought"] = reasoning or (step["response_text"] if step["tool_calls"] else "")
        step["is_complete"] = complete and not step["tool_calls"]
        self.send(step)

    def on_run_started(self, event: ev.RunStarted) -> None:
        self._step = None

    def on_step_started(self, event: ev.StepStarted) -> None:
        self._flush()
        self._step = self._open(event.iteration)

    def on_text_delta(self, event: ev.TextDelta) -> None:
        if not event.text:
            return
        if self._step is not None:
            self._step["response_text"] += event.text
        self.send({"type": "text_chunk", "content": event.text})

    def on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        """A piece of the model's reasoning: the thought of the current step."""
        self._thought.append(event.text)

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        if self._step is not None:
            self._step["tool_calls"].append({"id": event.call_id, "name": event.tool, "parameters": event.args})

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        if self._step is not None:
            self._step["tool_results"].append({"id": event.call_id, "name": event.tool, "success": event.ok,
                                               "result": event.output, "error": event.error})

    def on_approval_required(self, event: ev.ApprovalRequired) -> None:
        data: Data = {"type": "approval_required", "approval_id": event.approval_id, "tool_name": event.tool,
                      "tool_parameters": event.args}
        if event.child_id:  # a subagent's, asked through its parent
            data.update(child_id=event.child_id, parent_id=event.parent_id, asker=event.asker)
        self.send(data)

    def on_subagent_started(self, event: ev.SubagentStarted) -> None:
        self.send(event.model_dump(mode="json"))

    def on_subagent_finished(self, event: ev.SubagentFinished) -> None:
        self.send(event.model_dump(mode="json"))

    def on_file_ready(self, event: ev.FileReady) -> None:
        self.send({"type": "file_ready", "path": event.path, "lines": event.lines})

    def on_error(self, event: ev.ErrorEvent) -> None:
        self.send({"type": "error", "error": event.message})

    def on_complete(self, event: ev.Complete) -> None:
        self._flush(complete=True)
        self.send({"type": "complete", "success": event.success, "iterations": event.iterations,
                   "final_response": event.final_response, "completion_reason": event.completion_reason})


class SeedPrinter(SeedMapper):
    """`run --json-format seed`: one seed object per line on stdout, nothing else.

    The `complete` object is the last line and tells the run's outcome: it waits for the summary,
    and an error `run` reports after the loop (approvals denied because stdin closed: exit code 3)
    makes it `success: false` with that `error`, instead of a `complete {success: true}` that an
    `error` line contradicts."""

    def __init__(self, out: Any) -> None:
        def write(data: Data) -> None:
            out.write(json_line(redact(json.dumps(data, ensure_ascii=False))) + "\n")
            out.flush()

        super().__init__(self._send_or_hold)
        self._write = write
        self._ending: Data | None = None

    def _send_or_hold(self, data: Data) -> None:
        if data["type"] == "complete":
            self._ending = data
        else:
            self._write(data)

    def on_error(self, event: ev.ErrorEvent) -> None:
        if self._ending is not None and not event.recoverable:
            self._ending.update(success=False, error=event.message)
            return
        super().on_error(event)

    def notice(self, text: str) -> None:
        """Human notices go nowhere: stdout carries events only."""

    def summary(self, complete: ev.Complete, totals: Any, session_id: str) -> None:
        """The `complete` object carries the summary: it ends the output."""
        ending, self._ending = self._ending, None
        if ending is not None:  # the verdict's reason: `denied` when stdin closed on an approval
            ending.update(success=ending["success"] and complete.success, completion_reason=complete.completion_reason)
            self._write(ending)
