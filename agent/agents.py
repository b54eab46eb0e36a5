"""The agent types of the seed's factory: iterative (tool calling), stream (one answer) and ReAct.

All three are the loop of agent/loop.py with the same executor, approvals and completion rules;
they add the seed's resource limits (a `Budget`), compaction before each request, and a fresh
tool list per request (MCP tools come and go).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.compaction import Compactor
from agent.codeblocks import named_blocks
from agent.events import Complete, FileReady, StepStarted
from agent.llm import LLMError, ModelReply, ToolCallRequest
from agent.loop import MAX_MALFORMED, FatalLoopError, Run, assistant_message, strip_markers
from agent.modelchain import Budget, BudgetExceeded
from agent.react import PROTOCOL_HEADING, observation, parse, protocol


@dataclass
class IterativeRun(Run):
    """Today's loop: native tool calls until an answer without them."""

    budget: Budget | None = None
    compactor: Compactor | None = None
    tools_now: Callable[[], list[dict[str, Any]]] | None = None  # the tools offered at this moment

    async def execute(self) -> Complete:
        try:
            return await super().execute()
        except BudgetExceeded as exc:
            self.iterations -= 1  # the step it stopped made no request
            return self._complete(False, self._with(str(exc)), "budget")

    async def _query(self) -> ModelReply:
        if self.budget is not None:
            self.budget.check(self.totals)
        if self.tools_now is not None:
            self.tools = self.tools_now()
        self.before_request()
        if self.compactor is None:
            return await super()._query()
        tools = self.request_tools()
        await self.compactor.before_request(self.messages, tools)
        estimate = self.compactor.estimate(self.messages, tools)
        try:
            reply = await super()._query()
        except LLMError as exc:
            # No fallback model took it: compact what we can and try once more.
            if exc.kind != "context_window" or await self.compactor.compact(self.messages, tools) is None:
                raise
            estimate = self.compactor.estimate(self.messages, tools)
            reply = await super()._query()
        self.compactor.calibrate(estimate, reply.prompt_tokens)
        return reply

    def before_request(self) -> None:
        """Last changes to the request (the ReAct agent writes its tools into the prompt)."""


@dataclass
class StreamRun(IterativeRun):
    """The seed's StreamAgent: one answer, no tools; with `save_blocks` (the profile's
    `save_code_blocks`), the answer's code blocks that name a file are proposed as that file,
    through the usual approval, and each one saved is a `file_ready` event."""

    save_blocks: bool = False

    async def _steps(self) -> str:
        self.tools = []
        self.tools_now = None
        self.iterations += 1
        self.emit(StepStarted(iteration=self.iterations))
        reply = await self._query()
        self._append({"role": "assistant", "content": reply.text or None})
        self.last_text = reply.text
        if self.save_blocks:
            await self._save_blocks(reply.text)
        return strip_markers(reply.text)

    async def _save_blocks(self, text: str) -> None:
        for n, (path, content) in enumerate(named_blocks(text), 1):
            arguments = json.dumps({"file_path": path, "content": content,
                                    "reason": "a code block of the answer names this file"})
            call = ToolCallRequest(id=f"block_{self.iterations}_{n}", name="write_file", arguments=arguments)
            outcome = await self.executor.execute(call, scoped=False)
            if not outcome.failed:
                self.emit(FileReady(path=path, lines=len(content.splitlines())))


@dataclass
class ReactRun(IterativeRun):
    """The seed's ReActAgent: tools through the THOUGHT / ACTION text protocol (no native calls)."""

    def request_tools(self) -> list[dict[str, Any]]:
        return []

    def before_request(self) -> None:
        base = str(self.messages[0].get("content") or "").split(f"\n\n{PROTOCOL_HEADING}")[0]
        registry = self.executor.registry
        examples = {name: tool.examples for name in registry.names if (tool := registry.get(name)) is not None}
        self.messages[0] = {"role": "system", "content": f"{base}\n\n{protocol(self.tools, examples)}"}

    async def _steps(self) -> str:
        while True:
            reply = await self._next_step()
            if reply.tool_calls:  # a native call after all (a provider that takes tools anyway): run it
                self._append(assistant_message(reply))
                await self._run_calls(reply)
                continue
            self._append({"role": "assistant", "content": reply.text or None})
            if reply.text.strip():
                self.last_text = reply.text
            step = parse(reply.text)
            if step.action is None:
                return strip_markers(step.answer or reply.text)
            call = ToolCallRequest(id=f"react_{self.iterations}", name=step.action, arguments=step.arguments)
            outcome = await self.executor.execute(call)
            self._append(observation(step.action, outcome.content))
            self._malformed = self._malformed + 1 if outcome.malformed else 0
            if self._malformed >= MAX_MALFORMED:
                raise FatalLoopError(f"the model made {MAX_MALFORMED} malformed tool calls in a row; the last: "
                                     f"{outcome.content.removeprefix('Error: ')}")


RUNS: dict[str, type[IterativeRun]] = {"iterative": IterativeRun, "stream": StreamRun, "react": ReactRun}
