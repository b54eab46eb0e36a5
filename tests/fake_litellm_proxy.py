"""A scripted LiteLLM proxy in front of Claude: the OpenAI wire format (tests/fakellm.py) with what
the proxy adds for an Anthropic model asked to reason.

With `reasoning_effort` in the request, a reply's `reasoning` streams as the proxy streams it:
`reasoning_content` deltas with `thinking_blocks` pieces (`{"type": "thinking", "thinking": ...,
"index": N}`, then one carrying the block's `signature`), as litellm's Anthropic adapter yields them.
Requests are checked as the Claude behind it checks them (tests/anthropic_rules.py): with thinking
on, the last assistant turn that holds tool calls must start with its thinking blocks, sent back in
the assistant message's `thinking_blocks` exactly as received (the signature the server gave; a
changed block of the latest assistant message is refused as "cannot be modified").
The refusal is the proxy's 400 wrapping of Anthropic's error.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from tests.anthropic_rules import THINKING, THINKING_FIRST, Signer, block_problem
from tests.fakellm import FakeLLM, Reply

MODEL = "litellm_proxy/claude-sonnet-4-5"


class FakeLiteLLMProxy(FakeLLM):
    model = MODEL

    def __init__(self, *replies: Reply, **kwargs: Any) -> None:
        super().__init__(*replies, **kwargs)
        self.signer = Signer()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        refused = thinking_problem(body, self.signer)
        if refused is not None:
            with self._lock:
                self.rejected.append((body, refused))
            message = f"litellm.BadRequestError: AnthropicException - {refused}"
            return web.json_response({"error": {"message": message, "type": "invalid_request_error", "param": None,
                                                "code": "400"}}, status=400)
        self._thinking = bool(body.get("reasoning_effort"))
        return await super()._handle(request)

    def _chunks(self, reply: Reply, usage: dict[str, int]) -> list[dict[str, Any]]:
        chunks = super()._chunks(Reply(**{**reply.__dict__, "reasoning": ""}), usage)
        if not (self._thinking and reply.reasoning):
            return chunks
        size, text = max(1, reply.chunk_size), reply.reasoning
        deltas = [{"reasoning_content": text[i : i + size],
                   "thinking_blocks": [{"type": "thinking", "thinking": text[i : i + size], "index": 0}]}
                  for i in range(0, len(text), size)]
        deltas.append({"reasoning_content": "", "thinking_blocks": [
            {"type": "thinking", "thinking": "", "signature": self.signer.sign(text), "index": 0}]})
        base = {k: v for k, v in chunks[0].items() if k != "choices"}
        thought = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        return chunks[:1] + thought + chunks[1:]


def thinking_problem(body: dict[str, Any], signer: Signer) -> str | None:
    """Claude's refusal of the conversation the proxy would send it (None: accepted)."""
    messages = body.get("messages") or []
    turns = [(i, list(m.get("thinking_blocks") or [])) for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if (found := block_problem(turns, signer)) is not None:
        return found
    if not body.get("reasoning_effort"):
        return None
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if last is None or not messages[last].get("tool_calls"):
        return None
    blocks = messages[last].get("thinking_blocks") or []
    if not blocks or blocks[0].get("type") not in THINKING:
        return f"messages.{last}.content.0.type: " + THINKING_FIRST.format(found="tool_use")
    return None
