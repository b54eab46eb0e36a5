"""The built-in Anthropic Messages client: one streamed POST /v1/messages.

The stream's content blocks are assembled by index: text (streamed on), thinking (its text
streamed as reasoning, its signature kept with it), redacted thinking (kept whole), and tool_use
(its input gathered from `input_json_delta` pieces, so parallel calls arrive whole). Usage comes
from `message_start` and `message_delta`: the prompt is the uncached input plus the cache reads
and writes, as every other path counts it. An `error` event mid-stream (overloaded) is a failure
like an error answer.
"""

from __future__ import annotations

from typing import Any

from agent.llm.anthropic_body import body
from agent.llm.http import events, stream_error
from agent.llm.request import Request
from agent.llm.types import ModelReply, TextHook, ToolCallRequest

API_VERSION = "2023-06-01"
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
          "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length"}


def headers(request: Request) -> dict[str, str]:
    out = {"anthropic-version": API_VERSION}
    if request.key:
        out["x-api-key"] = request.key
    return out


class _Blocks:
    """The reply being assembled from the stream's events."""

    def __init__(self, on_text: TextHook, on_reasoning: TextHook) -> None:
        self.reply = ModelReply()
        self.calls: dict[int, ToolCallRequest] = {}
        self.on_text, self.on_reasoning = on_text, on_reasoning
        self.usage: dict[str, int] = {}
        self.done = False

    def take(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind == "message_start":
            self._usage((data.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            self._start(int(data.get("index", 0)), data.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(int(data.get("index", 0)), data.get("delta") or {})
        elif kind == "message_delta":
            stop = (data.get("delta") or {}).get("stop_reason")
            if stop:
                self.reply.finish_reason = FINISH.get(stop, stop)
            self._usage(data.get("usage") or {})
        elif kind == "message_stop":
            self.done = True

    def _start(self, index: int, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if kind == "tool_use":
            self.calls[index] = ToolCallRequest(id=str(block.get("id", "")), name=str(block.get("name", "")),
                                                arguments="")
        elif kind == "redacted_thinking":
            self.reply.thinking.add_block(index, {"type": "redacted_thinking", "data": block.get("data", "")})
        elif kind == "thinking":
            self.reply.thinking.add_block(index, {"type": "thinking", "thinking": block.get("thinking", "")})
        elif kind == "text" and block.get("text"):
            self._text(block["text"])

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            self._text(str(delta.get("text", "")))
        elif kind == "thinking_delta":
            piece = str(delta.get("thinking", ""))
            self.reply.thinking.add_block(index, {"type": "thinking", "thinking": piece})
            self.reply.thinking.add_text(piece)
            if piece:
                self.on_reasoning(piece)
        elif kind == "signature_delta":
            self.reply.thinking.add_block(index, {"type": "thinking", "signature": delta.get("signature", "")})
        elif kind == "input_json_delta" and index in self.calls:
            self.calls[index].arguments += str(delta.get("partial_json", ""))

    def _text(self, text: str) -> None:
        if text:
            self.reply.text += text
            self.on_text(text)

    def _usage(self, usage: dict[str, Any]) -> None:
        for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            if isinstance(usage.get(name), int):
                self.usage[name] = usage[name]

    def finished(self) -> ModelReply:
        reply, usage = self.reply, self.usage
        if usage:
            reply.usage_seen = True
            reply.cache_read_tokens = usage.get("cache_read_input_tokens", 0)
            reply.cache_write_tokens = usage.get("cache_creation_input_tokens", 0)
            reply.prompt_tokens = usage.get("input_tokens", 0) + reply.cache_read_tokens + reply.cache_write_tokens
            reply.completion_tokens = usage.get("output_tokens", 0)
        reply.tool_calls = [self.calls[i] for i in sorted(self.calls)]
        for call in reply.tool_calls:
            call.arguments = call.arguments or "{}"
        return reply


async def attempt(request: Request, on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
    blocks = _Blocks(on_text, on_reasoning)
    url = request.route.url("/messages")
    async with events(url, headers(request), body(request), request.timeout, request.place) as stream:
        async for _event, data in stream:
            stream_error(data, request.place)
            blocks.take(data)
            if blocks.done:
                break
    return blocks.finished()
