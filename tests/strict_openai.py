"""What OpenAI's APIs reject, checked by the test servers: Chat Completions and Responses.

From OpenAI's API reference and the errors it really returns (status 400, body
`{"error": {"message", "type": "invalid_request_error", "param", "code"}}`):

- messages: a non-empty list; roles system, developer, user, assistant, tool, function;
- every `tool_calls` id of an assistant message answered by a `tool` message (with that
  `tool_call_id`) before the next message of another role, and none left unanswered at the end;
  a `tool` message answers only a pending call; call ids at most 40 characters;
- tools: at most 128; names match `^[a-zA-Z0-9_-]+$` and are at most 64 characters, unique;
  `parameters` a JSON Schema object of `type: "object"`.

The Responses API gets the same tool rules on its flat tool list and the pairing rule on its
items (`function_call` answered by a `function_call_output` with the same `call_id`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aiohttp import web

NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
ROLES = ("system", "assistant", "user", "function", "tool", "developer")
MAX_TOOLS = 128
MAX_NAME = 64
MAX_CALL_ID = 40


@dataclass
class Problem:
    """One validation failure, as OpenAI words it."""

    message: str
    param: str | None = None
    code: str | None = None

    def response(self) -> web.Response:
        error = {"message": self.message, "type": "invalid_request_error", "param": self.param, "code": self.code}
        return web.json_response({"error": error}, status=400)


def chat_problem(body: dict[str, Any]) -> Problem | None:
    """Why OpenAI's Chat Completions would reject this request body (None: it would accept it)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return Problem("[] is too short - 'messages'", "messages", "empty_array")
    tools = [t.get("function", {}) for t in body.get("tools") or []]
    return _roles(messages) or _pairing(messages) or tools_problem(tools, "tools[{}].function")


def _roles(messages: list[dict[str, Any]]) -> Problem | None:
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ROLES:
            supported = ", ".join(f"'{r}'" for r in ROLES[:-1]) + f", and '{ROLES[-1]}'"
            return Problem(f"Invalid value: '{role}'. Supported values are: {supported}.",
                           f"messages[{i}].role", "invalid_value")
        if role == "tool" and not message.get("tool_call_id"):
            return Problem(f"Missing required parameter: 'messages[{i}].tool_call_id'.",
                           f"messages[{i}].tool_call_id", "missing_required_parameter")
        if role != "assistant" and "content" not in message:
            return Problem(f"Missing required parameter: 'messages[{i}].content'.",
                           f"messages[{i}].content", "missing_required_parameter")
    return None


def _pairing(messages: list[dict[str, Any]]) -> Problem | None:
    pending: dict[str, None] = {}
    opened = 0
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                return Problem("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                               "message with 'tool_calls'.", f"messages.[{i}].role")
            del pending[message["tool_call_id"]]
            continue
        if pending:
            return _unanswered(opened, pending)
        for j, tool_call in enumerate(message.get("tool_calls") or [] if role == "assistant" else []):
            call_id = str(tool_call.get("id") or "")
            if len(call_id) > MAX_CALL_ID:
                return Problem(f"Invalid 'messages[{i}].tool_calls[{j}].id': string too long. Expected a string "
                               f"with maximum length {MAX_CALL_ID}, but got a string with length {len(call_id)} "
                               "instead.", f"messages[{i}].tool_calls[{j}].id", "string_above_max_length")
            pending[call_id] = None
            opened = i
    return _unanswered(opened, pending) if pending else None


def _unanswered(index: int, pending: dict[str, None]) -> Problem:
    return Problem("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   "'tool_call_id'. The following tool_call_ids did not have response messages: "
                   + ", ".join(pending), f"messages.[{index}].role")


def tools_problem(functions: list[dict[str, Any]], where: str) -> Problem | None:
    """The tool-list rules shared by Chat Completions and Responses (`where` formats the index)."""
    if len(functions) > MAX_TOOLS:
        return Problem(f"Invalid 'tools': array too long. Expected an array with maximum length {MAX_TOOLS}, "
                       f"but got an array with length {len(functions)} instead.", "tools", "array_above_max_length")
    seen: set[str] = set()
    for i, function in enumerate(functions):
        name, param = str(function.get("name") or ""), where.format(i)
        if len(name) > MAX_NAME:
            return Problem(f"Invalid '{param}.name': string too long. Expected a string with maximum length "
                           f"{MAX_NAME}, but got a string with length {len(name)} instead.",
                           f"{param}.name", "string_above_max_length")
        if not NAME.match(name):
            return Problem(f"Invalid '{param}.name': string does not match pattern. Expected a string that "
                           "matches the pattern '^[a-zA-Z0-9_-]+$'.", f"{param}.name", "invalid_value")
        if name in seen:
            return Problem(f"Invalid 'tools': duplicate function name '{name}'.", "tools", "invalid_value")
        seen.add(name)
        parameters = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, dict) or parameters.get("type") != "object":
            got = parameters.get("type") if isinstance(parameters, dict) else type(parameters).__name__
            return Problem(f"Invalid schema for function '{name}': schema must be a JSON Schema of "
                           f"'type: \"object\"', got 'type: \"{got}\"'.", f"{param}.parameters",
                           "invalid_function_parameters")
    return None
