"""A strict Mistral chat-completions server: the OpenAI wire format (tests/fakellm.py, strict as
OpenAI) plus Mistral's own rule that every tool-call id, in an assistant's `tool_calls` and in a
`tool` message's `tool_call_id`, is exactly nine letters or digits; its refusal is Mistral's
400 `{"object": "error", "message": "Tool call id was ... but must be a-z, A-Z, 0-9, with a
length of 9.", "type": "invalid_request_message_error", ...}`.

The rule applies to requests for a Mistral model (`body["model"]` names one), so one server can
stand behind a session that starts on `openai/...` and falls back to `mistral/...`. Replies carry
nine-character ids, as Mistral's do.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from tests.fakellm import FakeLLM, ToolCallSpec

MODEL = "mistral/mistral-large-latest"
MISTRAL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")


def mistral_problem(body: dict[str, Any]) -> str | None:
    for message in body.get("messages") or []:
        ids = [c.get("id") for c in message.get("tool_calls") or []]
        ids += [message["tool_call_id"]] if "tool_call_id" in message else []
        for call_id in ids:
            if not MISTRAL_ID.match(str(call_id)):
                return f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9."
    return None


class FakeMistral(FakeLLM):
    model = MODEL

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        problem = "mistral" in str(body.get("model")) and mistral_problem(body)
        if problem:
            with self._lock:
                self.rejected.append((body, problem))
            return web.json_response({"object": "error", "message": problem, "type": "invalid_request_message_error",
                                      "param": None, "code": None}, status=400)
        return await super()._handle(request)

    def _call_id(self, spec: ToolCallSpec, prefix: str = "call_") -> str:
        return spec.id or f"{next(self._ids):09d}"
