"""The one way to the model: `LLM.complete`, whichever path the model takes.

The route (agent/llm/routing.py) picks a built-in streaming client (OpenAI Chat Completions,
Anthropic Messages, OpenAI Responses: agent/llm/chat.py, anthropic.py, responses.py) or litellm
(agent/llm/litellm_client.py). Every path gets the conversation prepared the same way (thinking
kept only where it may go back, and off while a Claude tool loop without it goes on, cache marks for Anthropic, tool names and call ids the provider
accepts, no more tools than it takes), and every path's failures come back as the same kinds and
words (agent/llm/errors.py): what is worth retrying is retried here with backoff, honouring the
provider's retry-after; the rest is an `LLMError` whose message says what to fix.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import random
import uuid
from dataclasses import dataclass, replace
from typing import Any

from agent import secrets
from agent.llm import toolschema
from agent.llm.errors import LLMError, failure, gave_up, unknown_provider, waiting, where
from agent.llm.preload import settle
from agent.llm.reasoning import estimated_tokens, for_request, request_level
from agent.llm.request import Request
from agent.llm.routing import Route, keyless_server, route
from agent.llm.types import ModelReply, Retryable, RetryHook, TextHook
from agent.llm.usage import Prices, caches_prompts, prices_for, with_cache_markers

MAX_WAIT = 30.0  # seconds of a provider's retry-after worth waiting for; longer: say when to retry
NO_KEY = "no-key"  # litellm's OpenAI client refuses to send without a key; a keyless server ignores it
CLIENTS = {"chat": "agent.llm.chat", "anthropic": "agent.llm.anthropic", "responses": "agent.llm.responses"}


def _quiet(_text: str) -> None:
    return None


@dataclass
class LLM:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    key_variable: str | None = None
    reasoning: str = "off"  # agent/llm/reasoning.py LEVELS
    path: str | None = None  # "litellm": every model through litellm (None: CODER_TUI_MODEL_PATH, else "auto")

    def __post_init__(self) -> None:
        secrets.register(self.api_key)  # providers quote keys back in their errors
        # the output limit sent (None: the model's default; agent/replies.py raises it)
        self.max_tokens: int | None = None

    def route(self) -> Route:
        return route(self.model, self.api_base, self.path)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: TextHook,
                       on_retry: RetryHook, on_reasoning: TextHook | None = None) -> ModelReply:
        path = self.route()
        level = request_level(messages, self.model, self.reasoning)
        messages = for_request(messages, self.model, level)
        if caches_prompts(self.model):
            messages, tools = with_cache_markers(messages, tools)
        fitted = toolschema.fit(self.model, messages, tools)  # names, ids, schemas this provider accepts
        sent_tools = fitted.tools[: path.max_tools] if path.max_tools else fitted.tools  # agent/tools/toolsearch.py
        request = replace(self._request(path, fitted.messages, sent_tools), reasoning=level)
        attempt = 0
        while True:
            try:
                reply = await self._attempt(request, on_text, on_reasoning or _quiet)
                fitted.restore(reply.tool_calls)
                return self._finished(reply)
            except Retryable as exc:
                too_long = exc.retry_after is not None and exc.retry_after > MAX_WAIT
                if attempt >= self.max_retries or too_long:
                    place = f"{self.model} at {where(self.model, self.api_base or path.base)}"
                    raise LLMError(gave_up(exc.why, place, attempt + 1, exc.retry_after if too_long else None,
                                           exc.kind), "gave_up") from None
                attempt += 1
                delay = self._delay(attempt, exc.retry_after)
                on_retry(waiting(exc.why, exc.retry_after), attempt, delay)
                await asyncio.sleep(delay)

    async def _attempt(self, request: Request, on_text: TextHook, on_reasoning: TextHook) -> ModelReply:
        if request.route.builtin:
            self._require_key(request)
            settle()  # the start-up's pause of garbage collection ends at the first request
            client = importlib.import_module(CLIENTS[request.route.protocol])
            reply: ModelReply = await client.attempt(request, on_text, on_reasoning)
            return reply
        from agent.llm import litellm_client
        from agent.llm.requestloop import on_caller_loop, request_loop

        await litellm_client.ensure_loaded()
        settle()  # after litellm's import, which its own pause covers (agent/llm/preload.py)
        reply = await request_loop().run(litellm_client.attempt(request, on_caller_loop(on_text),
                                                                on_caller_loop(on_reasoning)))
        await asyncio.sleep(0)  # the text handed over before the reply is handled first
        return reply

    def _request(self, path: Route, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Request:
        return Request(self.model, self.api_base, self.key_variable, self.timeout, self.reasoning, self.max_tokens,
                       path, messages, tools, self._key(path))

    def _key(self, path: Route) -> str | None:
        """The key sent: the one given, else the provider's variable's (None: no key anywhere)."""
        if self.api_key:
            return self.api_key
        for variable in (path.key_variable, self.key_variable):
            if variable and os.environ.get(variable):
                return os.environ[variable]
        if not path.builtin and self.api_base and self.model.startswith("openai/"):
            return NO_KEY
        return None

    def _require_key(self, request: Request) -> None:
        """A provider that needs a key gets none: said before anything is sent. A local server, a
        proxy or an OpenAI-compatible server at an address of the user's own needs none."""
        if request.key or keyless_server(self.model, self.api_base):
            return
        found = failure("no_key", request.place)
        raise LLMError(found.message, found.kind)

    def _finished(self, reply: ModelReply) -> ModelReply:
        reply.reasoning_tokens = reply.reasoning_tokens or estimated_tokens(reply.thinking.text, reply.completion_tokens)
        for index, call in enumerate(reply.tool_calls):
            call.id = call.id or f"call_{uuid.uuid4().hex[:12]}_{index}"
        if reply.prompt_tokens or reply.completion_tokens:
            prices = prices_for(self.model)
            if prices is not None:
                reply.cost = prices.cost(reply.prompt_tokens, reply.completion_tokens, reply.cache_read_tokens,
                                         reply.cache_write_tokens)
        return reply

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), 60.0)
        backoff = self.retry_base_delay * (2 ** (attempt - 1))
        return min(backoff * (1 + random.random() * 0.1), 30.0)

    async def check(self) -> str:
        """One small request: proves model, address and key work (LLMError when they do not)."""
        path = self.route()
        hello = [{"role": "user", "content": "Reply with the word OK."}]
        if not path.builtin:
            from agent.llm import litellm_client
            from agent.llm.requestloop import request_loop

            await litellm_client.ensure_loaded()
            return await request_loop().run(litellm_client.check(self._request(path, hello, [])))
        request = replace(self._request(path, hello, []), reasoning="off", max_tokens=16)
        try:
            return (await self._attempt(request, _quiet, _quiet)).text
        except Retryable as exc:
            raise LLMError(exc.why, exc.kind or "gave_up") from None


async def configuration_problem(model: str, api_base: str | None = None, path: str | None = None) -> str | None:
    """Why `model` cannot be routed at all (an unknown provider), checked before any request. A
    built-in route always can; the litellm path asks litellm (importing it: that model needs it)."""
    if route(model, api_base, path).builtin:
        return None
    from agent.llm import litellm_client

    await litellm_client.ensure_loaded()
    return unknown_provider(model) if litellm_client.unroutable(model) else None


def model_prices(model: str) -> Prices | None:
    """The model's prices per token (None: unknown, so no cost is counted)."""
    return prices_for(model)
