"""What Anthropic's Messages API refuses, checked the way it checks (tests/fake_anthropic.py).

From the API's documentation (Messages, tool use, extended thinking, prompt caching) and the
error texts it answers with (status 400, `invalid_request_error`):
- roles: `user` and `assistant` (the system prompt is a top-level field), the first message a
  user's; a mid-conversation `system` message only right after a user message (Claude Opus 4.8's
  "mid-conversation system messages": Claude Code 2.1 sends one); consecutive turns of one role are
  merged, as the API does, before the rules below;
- every `tool_use` of an assistant turn is answered by a `tool_result` in the next user turn,
  whose tool results come before any other content, and a result answers a call of the turn
  just before it;
- with `thinking` enabled: `budget_tokens` at least 1024 and below `max_tokens`, and the final
  assistant turn, when it holds a `tool_use`, starts with a `thinking` or `redacted_thinking`
  block; with thinking off, the final assistant turn holds no thinking block;
- thinking blocks come back exactly as sent: a block of the latest assistant turn whose
  signature the server gave for another text (a block changed, e.g. a secret masked in it) is
  refused as "cannot be modified", any other block whose signature is not the one the server gave
  that text as "Invalid `signature`" (`Signer`); a redacted block's data must be one the server gave;
  blocks may be left out of past turns;
- at most four `cache_control` marks in tools, system and messages;
- tool names match `^[a-zA-Z0-9_-]{1,128}$`; text blocks are not empty.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Any

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
THINKING = ("thinking", "redacted_thinking")
THINKING_FIRST = ("Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a "
                  "final `assistant` message must start with a thinking block (preceeding the lastmost set of "
                  "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous "
                  "turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
                  "https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
MODIFIED = ("`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These "
            "blocks must remain as they were in the original response.")


class Signer:
    """Signs the thinking the server sends, and knows its own signatures and redacted data."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(16)
        self._redacted: set[str] = set()
        self._given: set[str] = set()  # the signatures sent

    def sign(self, thinking: str) -> str:
        digest = hmac.new(self._key, thinking.encode(), hashlib.sha256).digest()
        signature = base64.b64encode(b"sig1" + digest).decode()
        self._given.add(signature)
        return signature

    def modified(self, block: dict[str, Any]) -> bool:
        """A block the server sent, changed: its signature is one it gave, for another text."""
        return block.get("type") == "thinking" and block.get("signature") in self._given and not self.valid(block)

    def redacted(self, seed: str) -> str:
        data = base64.b64encode(b"redacted:" + hashlib.sha256((seed + str(len(self._redacted))).encode()).digest()).decode()
        self._redacted.add(data)
        return data

    def valid(self, block: dict[str, Any]) -> bool:
        if block.get("type") == "redacted_thinking":
            return block.get("data") in self._redacted
        signature = block.get("signature")
        return isinstance(signature, str) and hmac.compare_digest(signature, self.sign(str(block.get("thinking", ""))))


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def merged_turns(messages: list[dict[str, Any]]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    """(index of the turn's first message, role, blocks), consecutive same-role messages merged."""
    turns: list[tuple[int, str, list[dict[str, Any]]]] = []
    for index, message in enumerate(messages):
        role, blocks = message.get("role"), _blocks(message.get("content"))
        if turns and turns[-1][1] == role:
            turns[-1][2].extend(blocks)
        else:
            turns.append((index, str(role), blocks))
    return turns


def problem(body: dict[str, Any], signer: Signer) -> str | None:
    """The API's error message for this request, or None when it would be accepted."""
    for check in (_basics, _cache_marks, _tools, _thinking_settings):
        if (found := check(body)) is not None:
            return found
    if (found := _system_messages(body["messages"])) is not None:
        return found
    turns = merged_turns([m for m in body["messages"] if m.get("role") != "system"])
    return _turns(turns) or _tool_pairs(turns) or _thinking_blocks(body, turns, signer)


def _basics(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: Field required"
    if not body.get("messages"):
        return "messages: at least one message is required"
    return None


def _cache_marks(body: dict[str, Any]) -> str | None:
    marks = sum(1 for tool in body.get("tools") or [] if "cache_control" in tool)
    system = body.get("system")
    marks += sum(1 for block in system if "cache_control" in block) if isinstance(system, list) else 0
    marks += sum(1 for m in body["messages"] for b in _blocks(m.get("content")) if "cache_control" in b)
    return f"A maximum of 4 blocks with cache_control may be provided. Found {marks}." if marks > 4 else None


def _tools(body: dict[str, Any]) -> str | None:
    for index, tool in enumerate(body.get("tools") or []):
        if not TOOL_NAME.match(str(tool.get("name", ""))):
            return f"tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
    return None


def _thinking_settings(body: dict[str, Any]) -> str | None:
    thinking = body.get("thinking") or {}
    if thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if budget >= body["max_tokens"]:
        return ("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
                "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
    return None


def _system_messages(messages: list[dict[str, Any]]) -> str | None:
    for index, message in enumerate(messages):
        if message.get("role") == "system" and (index == 0 or messages[index - 1].get("role") != "user"):
            return (f"messages.{index}: a system message must come immediately after a user message "
                    "(mid-conversation system messages)")
    return None


def _turns(turns: list[tuple[int, str, list[dict[str, Any]]]]) -> str | None:
    for index, role, blocks in turns:
        if role not in ("user", "assistant"):
            return f'messages.{index}.role: Input should be \'user\' or \'assistant\' (got "{role}")'
        for position, block in enumerate(blocks):
            if block.get("type") == "text" and not block.get("text"):
                return f"messages.{index}.content.{position}.text: text content blocks must be non-empty"
    if turns[0][1] != "user":
        return "messages.0.role: the first message must use the \"user\" role"
    return None


def _tool_pairs(turns: list[tuple[int, str, list[dict[str, Any]]]]) -> str | None:
    for number, (index, role, blocks) in enumerate(turns):
        if role != "user":
            continue
        results = [b for b in blocks if b.get("type") == "tool_result"]
        called = {b.get("id") for b in turns[number - 1][2] if b.get("type") == "tool_use"} if number else set()
        for position, block in enumerate(results):
            if block.get("tool_use_id") not in called:
                return (f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                        "block in the previous message.")
        if results and blocks[: len(results)] != results:
            return f"messages.{index}: `tool_result` blocks must come first in the content of a user message"
    for number, (index, role, blocks) in enumerate(turns):
        calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        if role != "assistant" or not calls:
            continue
        answered = ({b.get("tool_use_id") for b in turns[number + 1][2] if b.get("type") == "tool_result"}
                    if number + 1 < len(turns) else set())
        missing = [c for c in calls if c not in answered]
        if missing and number + 1 < len(turns):
            return (f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding `tool_result` "
                    "block in the next message.")
    return None


def _thinking_blocks(body: dict[str, Any], turns: list[tuple[int, str, list[dict[str, Any]]]],
                     signer: Signer) -> str | None:
    if (found := block_problem([(index, blocks) for index, role, blocks in turns if role == "assistant"],
                               signer)) is not None:
        return found
    enabled = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
    final = next(((i, blocks) for i, role, blocks in reversed(turns) if role == "assistant"), None)
    if final is None:
        return None
    index, blocks = final
    if enabled and any(b.get("type") == "tool_use" for b in blocks) and blocks[0].get("type") not in THINKING:
        return f"messages.{index}.content.0.type: " + THINKING_FIRST.format(found=blocks[0].get("type"))
    if not enabled and any(b.get("type") in THINKING for b in blocks):
        return (f"messages.{index}.content.0.type: When `thinking` is disabled, an `assistant` message in the "
                "final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.")
    return None


def block_problem(assistant_turns: list[tuple[int, list[dict[str, Any]]]], signer: Signer) -> str | None:
    """The refusal of a thinking block that did not come back as sent ((message index, blocks) of each
    assistant turn, in order; the last is the latest)."""
    for number, (index, blocks) in enumerate(assistant_turns):
        for position, block in enumerate(blocks):
            if block.get("type") not in THINKING or signer.valid(block):
                continue
            if number == len(assistant_turns) - 1 and signer.modified(block):
                return f"messages.{index}.content.{position}: {MODIFIED}"
            what = "data" if block["type"] == "redacted_thinking" else "signature"
            return f"messages.{index}.content.{position}: Invalid `{what}` in `{block['type']}` block"
    return None
