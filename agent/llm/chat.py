"""The built-in OpenAI Chat Completions client: OpenAI, OpenRouter, Ollama, vLLM, LM Studio,
llama.cpp, Groq, DeepSeek, Together, Mistral, xAI, Gemini's OpenAI-compatible endpoint and a
LiteLLM proxy, all over one streamed POST /chat/completions.

The conversation is already in this format; a request sends only the fields the API defines
(`thinking_blocks` too for a LiteLLM proxy, which hands them to the Claude behind it, and
DeepSeek's `reasoning_content` on tool-call turns). Streamed
text, `reasoning_content` (or OpenRouter's `reasoning`), the proxy's `thinking_blocks` and tool-call
pieces are assembled by index, so parallel calls arrive whole. OpenAI's reasoning models (o1, o3,
o4, gpt-5) take `max_completion_tokens` instead of `max_tokens`.
"""

from __future__ import annotations

import re
from typing import Any

from agent.llm.http import events, stream_error
from agent.llm.reasoning import TEXT_PROVIDERS, takes_effort
from agent.llm.request import Request
from agent.llm.types import ModelReply, TextHook, ToolCallRequest

MESSAGE_KEYS = {"system": ("role", "content", "name"), "developer": ("role", "content", "name"),
                "user": ("role", "content", "name"), "tool": ("role", "content", "tool_call_id"),
                "assistant": ("role", "content", "name", "tool_calls", "refusal")}
CALL_KEYS = ("id", "type", "function")
COMPLETION_TOKENS_FAMILY = re.compile(r"^(o\d|gpt-5)")


def body(request: Request) -> dict[str, Any]:
    route, llm = request.route, request
    out: dict[str, Any] = {"model": route.model, "messages": messages(request.messages, route.provider), "stream": True}
    if route.settings.stream_usage:
        out["stream_options"] = {"include_usage": True}
    if request.tools:
        out["tools"] = request.tools
    if llm.max_tokens:
        family = route.provider == "openai" and COMPLETION_TOKENS_FAMILY.match(route.model)
        out["max_completion_tokens" if family else "max_tokens"] = llm.max_tokens
    if llm.reasoning != "off" and takes_effort(llm.model):
        out["reasoning_effort"] = llm.reasoning
    return out


def messages(conversation: list[dict[str, Any]], provider: str) -> list[dict[str, Any]]:
    """The conversation with only the fields Chat Completions defines (and a proxy's blocks, and
    DeepSeek's reasoning text: agent/llm/reasoning.py `for_request` chose which messages keep them)."""
    blocks, text = provider == "litellm_proxy", provider in TEXT_PROVIDERS
    out = []
    for message in conversation:
        allowed = MESSAGE_KEYS.get(str(message.get("role")), tuple(message))
        kept = {k: v for k, v in message.items() if k in allowed}
        if blocks and message.get("thinking_blocks"):
            kept["thinking_blocks"] = message["thinking_blocks"]
        if text and "reasoning_content" in message:
            kept["reasoning_content"] = message["reasoning_content"]
        if "tool_calls" in kept:
            kept["tool_calls"] = [{k: v for k, v in call.items() if k in CALL_KEYS} for call in kept["tool_calls"]]
        out.append(kept)
    return out


def headers(request: Request) -> dict[str, str]:
    return {"Authorization": f"Bearer {request.key}"} if request.key else {}


async def attempt(request: Request, on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
    reply = ModelReply()
    calls: dict[int, ToolCallRequest] = {}
    url = request.route.url("/chat/completions")
    async with events(url, headers(request), body(request), request.timeout, request.place) as stream:
        async for _event, chunk in stream:
            stream_error(chunk, request.place)
            absorb(chunk, reply, calls, on_text, on_reasoning)
            if reply.finish_reason and reply.usage_seen:
                break
    reply.tool_calls = [calls[i] for i in sorted(calls)]
    return reply


def absorb(chunk: dict[str, Any], reply: ModelReply, calls: dict[int, ToolCallRequest], on_text: TextHook,
           on_reasoning: TextHook) -> None:
    if isinstance(usage := chunk.get("usage"), dict) and usage.get("prompt_tokens") is not None:
        read_usage(usage, reply)
    choices = chunk.get("choices") or []
    if not choices:
        return
    choice = choices[0]
    if choice.get("finish_reason"):
        reply.finish_reason = choice["finish_reason"]
    delta = choice.get("delta") or {}
    if thought := reply.thinking.absorb(delta):
        on_reasoning(thought)
    if isinstance(text := delta.get("content"), str) and text:
        reply.text += text
        on_text(text)
    for piece in delta.get("tool_calls") or []:
        index = piece.get("index") if isinstance(piece.get("index"), int) else len(calls)
        entry = calls.setdefault(index, ToolCallRequest(id="", name="", arguments=""))
        entry.id = piece.get("id") or entry.id
        function = piece.get("function") or {}
        entry.name = function.get("name") or entry.name
        if isinstance(function.get("arguments"), str):
            entry.arguments += function["arguments"]


def read_usage(usage: dict[str, Any], reply: ModelReply) -> None:
    reply.usage_seen = True
    reply.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    reply.completion_tokens = int(usage.get("completion_tokens") or 0)
    details = usage.get("prompt_tokens_details") or {}
    # OpenAI's cached_tokens; DeepSeek's prompt_cache_hit_tokens; a LiteLLM proxy in front of Claude
    # adds Anthropic's cache writes as cache_creation_input_tokens
    reply.cache_read_tokens = int(details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0)
    reply.cache_write_tokens = int(usage.get("cache_creation_input_tokens") or 0)
    thought = usage.get("completion_tokens_details") or {}
    reply.reasoning_tokens = int(thought.get("reasoning_tokens") or 0)
