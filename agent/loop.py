"""The agent loop: query the model, run the tool calls it makes, feed results back, repeat.

A run ends on an answer without tool calls, a completion marker, the step limit, a stop
decision, or a fatal error. Non-local exits are exceptions carrying what to tell the user.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent import argrepair, replies
from agent.approval import StopRun
from agent.events import Complete, ErrorEvent, ReasoningDelta, Retrying, StepStarted, TextDelta, Usage
from agent.executor import Executor
from agent.llm import LLM, LLMError, ModelReply, ToolCallRequest
from agent.secrets import StreamRedactor
from agent.llm.toolcalls_text import TextCallFilter

MARKER_RE = re.compile(
    r"complete_task_and_submit_final_output|<!--\s*task complete\s*-->|<task_complete>|task_complete",
    re.IGNORECASE,
)
MARKERS = ["complete_task_and_submit_final_output", "<!-- task complete -->", "<task_complete>", "task_complete"]
MAX_MALFORMED = 3


class MaxStepsReached(Exception):
    pass


class FatalLoopError(Exception):
    pass


def strip_markers(text: str) -> str:
    return MARKER_RE.sub("", text).strip()


class MarkerFilter:
    """Removes completion markers from streamed text, even when split across chunks."""

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.buffer = ""

    def feed(self, text: str) -> None:
        self.buffer = MARKER_RE.sub("", self.buffer + text)
        keep = _partial_marker_length(self.buffer)
        ready, self.buffer = self.buffer[: len(self.buffer) - keep], self.buffer[len(self.buffer) - keep :]
        if ready:
            self.out(ready)

    def flush(self) -> None:
        if self.buffer:
            self.out(self.buffer)
            self.buffer = ""


def _partial_marker_length(text: str) -> int:
    tail = text[-len(MARKERS[0]) :].lower()
    for size in range(len(tail), 0, -1):
        piece = tail[-size:]
        if any(marker.startswith(piece) for marker in MARKERS):
            return size
    return 0


@dataclass
class Totals:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, reply: ModelReply) -> Usage:
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.cached_tokens += reply.cache_read_tokens
        self.cache_write_tokens += reply.cache_write_tokens
        self.reasoning_tokens += reply.reasoning_tokens
        if reply.cost is not None:
            self.cost = (self.cost or 0.0) + reply.cost
        return Usage(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                     cost=reply.cost, total_prompt_tokens=self.prompt_tokens,
                     total_completion_tokens=self.completion_tokens, total_cost=self.cost,
                     cached_tokens=reply.cache_read_tokens, cache_write_tokens=reply.cache_write_tokens,
                     total_cached_tokens=self.cached_tokens, total_cache_write_tokens=self.cache_write_tokens,
                     reasoning_tokens=reply.reasoning_tokens, total_reasoning_tokens=self.reasoning_tokens)

    def restore(self, usage: dict[str, Any]) -> None:
        """The totals as a recorded `usage` event left them (resuming a session)."""
        self.prompt_tokens = usage.get("total_prompt_tokens", 0)
        self.completion_tokens = usage.get("total_completion_tokens", 0)
        self.cost = usage.get("total_cost")
        self.cached_tokens = usage.get("total_cached_tokens", 0)
        self.cache_write_tokens = usage.get("total_cache_write_tokens", 0)
        self.reasoning_tokens = usage.get("total_reasoning_tokens", 0)


@dataclass
class Run:
    """One user turn of a conversation."""

    llm: LLM
    executor: Executor
    messages: list[dict[str, Any]]  # the conversation; this run appends to it
    tools: list[dict[str, Any]]
    emit: Callable[[Any], None]
    record: Callable[[dict[str, Any]], None]  # persists each message appended
    totals: Totals
    max_steps: int = 50
    iterations: int = 0
    last_text: str = ""
    _malformed: int = field(default=0, init=False)
    partial: list[str] = field(default_factory=list, init=False)  # the text streamed of the current reply
    _shown: TextCallFilter | None = field(default=None, init=False)  # holds back calls written in the text

    async def execute(self) -> Complete:
        try:
            answer = await self._steps()
            return self._complete(True, answer, "answered")
        except MaxStepsReached:
            note = f"Stopped after {self.max_steps} steps (the step limit; raise it with --max-steps)."
            return self._complete(False, self._with(note), "max_steps")
        except StopRun:
            return self._complete(False, self._with("Stopped by the user."), "stopped")
        except (LLMError, FatalLoopError) as exc:
            self.emit(ErrorEvent(message=str(exc), recoverable=False,
                                 configuration=isinstance(exc, LLMError) and exc.configuration))
            return self._complete(False, str(exc), "error")

    def request_tools(self) -> list[dict[str, Any]]:
        """The tool schemas sent with a request (the ReAct agent sends none: they are in its prompt)."""
        return self.tools

    def _with(self, note: str) -> str:
        text = strip_markers(self.last_text)
        return f"{text}\n\n{note}" if text else note

    def _complete(self, success: bool, text: str, reason: str) -> Complete:
        event = Complete(success=success, iterations=self.iterations, final_response=text,
                         completion_reason=reason)  # type: ignore[arg-type]
        self.emit(event)
        return event

    def _append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.record(message)

    async def _next_step(self) -> ModelReply:
        """Start the next step (within the step budget) and ask the model for it."""
        if self.iterations >= self.max_steps:
            raise MaxStepsReached()
        self.iterations += 1
        self.emit(StepStarted(iteration=self.iterations))
        self.executor.new_turn(f"step {self.iterations}")
        return await self._query()

    async def _steps(self) -> str:
        while True:
            reply = await self._checked(await self._next_step())
            self._append(assistant_message(reply))
            if reply.text.strip():
                self.last_text = reply.text
            replies.check_filtered(reply, self.llm)
            if replies.cut_off(reply):
                self._refuse_cut_off(reply)
                continue
            if not reply.tool_calls:
                return strip_markers(reply.text)
            await self._run_calls(reply)
            if MARKER_RE.search(reply.text):
                return strip_markers(reply.text)

    async def _checked(self, reply: ModelReply) -> ModelReply:
        """An empty reply asked for again once; calls written in the text taken as calls."""
        if not reply.text.strip() and not reply.tool_calls:  # filtered before a word: nothing to record
            replies.check_filtered(reply, self.llm)
        if replies.is_empty(reply):
            self.emit(Retrying(why="the model sent an empty reply", attempt=1, delay=0))
            reply = await self._query()
            if replies.is_empty(reply):
                raise replies.empty_failure(self.llm)
        if self._shown is not None:
            replies.take_text_calls(reply, self._shown)
        return reply

    def _refuse_cut_off(self, reply: ModelReply) -> None:
        """A call cut off by the output limit is not run; the model is told and the turn goes on."""
        note = replies.cut_off_note(reply, self.llm)
        self.emit(replies.CUT_OFF_WARNING)
        for call in reply.tool_calls:
            self._append({"role": "tool", "tool_call_id": call.id, "content": f"Error: {note}"})
        if not reply.tool_calls:
            self._append({"role": "user", "content": note})
        self._malformed += 1
        if self._malformed >= MAX_MALFORMED:
            raise FatalLoopError(f"the model's reply was cut off by the output token limit {MAX_MALFORMED} "
                                 "times in a row in the middle of a tool call")

    async def _query(self) -> ModelReply:
        self.partial.clear()

        def shown(text: str) -> None:
            self.partial.append(text)
            self.emit(TextDelta(text=text))

        known = {t["function"]["name"] for t in self.request_tools() if "function" in t}
        self._shown = filtered = TextCallFilter(shown, known)
        masked = StreamRedactor(filtered.feed)
        stream = MarkerFilter(masked.feed)
        thought = StreamRedactor(lambda text: self.emit(ReasoningDelta(text=text)))

        def on_retry(why: str, attempt: int, delay: float) -> None:
            self.emit(Retrying(why=why, attempt=attempt, delay=round(delay, 2)))

        try:
            reply = await self.llm.complete(self.messages, self.request_tools(), stream.feed, on_retry, thought.feed)
        finally:
            thought.flush()
            stream.flush()
            masked.flush()
            filtered.flush()
        self.emit(self.totals.add(reply))
        return reply

    def _batches(self, calls: list[ToolCallRequest]) -> list[list[ToolCallRequest]]:
        """The calls in order, consecutive calls of a tool that runs alongside others (a subagent's
        `agent` tool: `concurrent = True`) grouped to run at once."""
        batches: list[list[ToolCallRequest]] = []
        for call in calls:
            tool = self.executor.registry.get(call.name)
            together = bool(getattr(tool, "concurrent", False))
            if together and batches and batches[-1][-1].name == call.name:
                batches[-1].append(call)
            else:
                batches.append([call])
        return batches

    async def _run_calls(self, reply: ModelReply) -> None:
        answered: set[str] = set()
        try:
            for batch in self._batches(reply.tool_calls):
                if len(batch) == 1:
                    outcomes = [await self.executor.execute(batch[0])]
                else:
                    outcomes = await asyncio.gather(*(self.executor.execute(call) for call in batch))
                for call, outcome in zip(batch, outcomes):
                    self._answered(call, outcome)
                    answered.add(call.id)
        finally:
            for call in reply.tool_calls:
                if call.id not in answered:
                    self._append({"role": "tool", "tool_call_id": call.id,
                                  "content": "Not completed: the run was stopped before this call finished."})

    def _answered(self, call: ToolCallRequest, outcome: Any) -> None:
        self._append({"role": "tool", "tool_call_id": call.id, "content": outcome.content})
        self._malformed = self._malformed + 1 if outcome.malformed else 0
        if self._malformed >= MAX_MALFORMED:
            raise FatalLoopError(
                f"the model made {MAX_MALFORMED} malformed tool calls in a row; the last: "
                f"{outcome.content.removeprefix('Error: ')}"
            )


def assistant_message(reply: ModelReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, **reply.thinking.message_fields()}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _json_object(c.arguments)}}
            for c in reply.tool_calls
        ]
    return message


def _json_object(arguments: str) -> str:
    """The arguments, or "{}" when they are not a JSON object: adapters that send calls back as
    objects (Ollama's, Anthropic's) cannot convert them and would fail every later request. The
    call's result already tells the model what was wrong with what it sent."""
    try:
        return arguments if isinstance(json.loads(arguments), dict) else "{}"
    except ValueError:
        repaired = argrepair.repair(arguments)  # the call ran with these (agent/tools/registry.py)
        return json.dumps(repaired) if repaired is not None else "{}"
