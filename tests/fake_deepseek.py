"""A scripted DeepSeek API on loopback: the OpenAI wire format (tests/fakellm.py) with DeepSeek's
thinking-mode rule (its "Thinking Mode" guide, api-docs.deepseek.com/guides/thinking_mode).

Thinking mode is on by default (`thinking: {"type": "disabled"}` turns it off): a reply's
`reasoning` streams as `reasoning_content` deltas, and every assistant message that made tool
calls must carry its `reasoning_content` in all later requests; a request without it is answered
400 `invalid_request_error` with DeepSeek's message (recorded in `rejected`; the script is not
consumed). Reasoning text of a turn without tool calls may come back or not (it is ignored).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from tests.fakellm import FakeLLM

MODEL = "deepseek/deepseek-v4-flash"
MISSING = "The `reasoning_content` in the thinking mode must be passed back to the API."


class FakeDeepSeek(FakeLLM):
    model = MODEL

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if (refused := thinking_problem(body)) is not None:
            with self._lock:
                self.rejected.append((body, refused))
            error = {"message": refused, "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}
            return web.json_response({"error": error}, status=400)
        return await super()._handle(request)


def thinking_problem(body: dict[str, Any]) -> str | None:
    if (body.get("thinking") or {}).get("type") == "disabled":
        return None
    for message in body.get("messages") or []:
        if message.get("role") == "assistant" and message.get("tool_calls") and "reasoning_content" not in message:
            return MISSING
    return None
