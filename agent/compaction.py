"""Sessions longer than the context window: older turns become a structured summary.

Before a request would pass about 80% of the model's context window, the conversation before the
last few turns is summarised by the small model (goal, decisions, files touched and why, open
todos, what failed) and replaced by that summary. The cut is always before a user message or an
assistant turn, so a tool call and its result are never separated. The session file keeps every
message; a `compaction` line records the summary and the turns kept, and a resume starts there.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.events import Compacted
from agent.images import count, json_chars, text_of

THRESHOLD = 0.8
TAIL_SHARE = 0.3  # of the window, at most, kept verbatim
KEEP_BLOCKS = 4  # turns kept verbatim when no window is known (manual /compact)
RESULT_CAP = 2_000  # characters of each tool result shown to the summariser
TRANSCRIPT_CAP = 120_000
SUMMARY_HEADER = "[Summary of the earlier conversation, written when it was compacted to fit the context window]"
SUMMARY_PROMPT = """You compress the earlier part of a coding agent's conversation so that the agent can
continue the task without it. Write a summary with exactly these sections:

## Goal
What the user wants, in their words where possible, and any constraints they gave.
## Decisions
What was decided and why (approaches chosen or rejected, answers the user gave).
## Files touched
Each file read or changed, with why and what changed (paths exactly as written).
## Open todos
What is still to do, in order.
## What failed
Errors, failed commands, denied or rejected changes, and what was learned from them.

Be concrete and brief: names, paths, commands, numbers. Do not invent anything that is not in the
conversation."""

Summarize = Callable[[list[dict[str, Any]]], Awaitable[str]]


def estimate_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """A fast estimate (about four characters a token) that needs no tokenizer download."""
    size = sum(json_chars(m) for m in messages) + 2 * len(messages)
    if tools:
        size += len(json.dumps(tools, ensure_ascii=False))
    return size // 4 + 1


class Sizes:
    """The conversation's JSON length as `estimate_tokens` measures it, counted incrementally: a
    step only appends messages, so only those are serialised. The system message (the ReAct agent
    rewrites it every step) is measured each time; a compaction (it replaces the first turns and
    shortens the list) shows in the identity of the first and last counted messages, and all is
    counted again. Tool lists that know their JSON length (`chars`: profiles.toolset.Schemas) are
    not serialised again."""

    def __init__(self) -> None:
        self._counted: list[dict[str, Any]] = []  # messages[1:] measured so far, by identity
        self._chars = 0  # their JSON lengths

    def chars(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
        if not messages:
            return 2 + _tools_chars(tools)
        rest, counted = len(messages) - 1, self._counted
        if counted and (rest < len(counted) or messages[1] is not counted[0]
                        or messages[len(counted)] is not counted[-1]):
            self._counted, self._chars = [], 0
        for message in messages[1 + len(self._counted):]:
            self._counted.append(message)
            self._chars += json_chars(message)  # an image counts as its tokens, not its base64
        # "[", "]" and ", " between messages, as json.dumps writes the list
        size = len(json.dumps(messages[0], ensure_ascii=False)) + self._chars + 2 + 2 * rest
        return size + _tools_chars(tools)


def _tools_chars(tools: list[dict[str, Any]] | None) -> int:
    if not tools:
        return 0
    known = getattr(tools, "chars", None)
    return known if known is not None else len(json.dumps(tools, ensure_ascii=False))


def boundaries(messages: list[dict[str, Any]]) -> list[int]:
    """Indices where a cut keeps every tool call with its result (never the system message)."""
    return [i for i in range(2, len(messages)) if messages[i].get("role") in ("user", "assistant")]


def choose_cut(messages: list[dict[str, Any]], tail_budget: int | None) -> int:
    """The index of the first message kept verbatim (<= 1: nothing to compact)."""
    cuts = boundaries(messages)
    if not cuts:
        return 0
    kept = cuts[-1]  # the last turn always stays
    for index in reversed(cuts[:-1]):
        blocks = sum(1 for c in cuts if c >= index)
        if tail_budget is None and blocks > KEEP_BLOCKS:
            break
        if tail_budget is not None and estimate_tokens(messages[index:]) > tail_budget:
            break
        kept = index
    return kept


def render(messages: list[dict[str, Any]]) -> str:
    """The turns to summarise as plain text (tool results cut, the whole capped)."""
    lines = []
    for message in messages:
        role, content = message.get("role", "?"), message.get("content") or ""
        if count(content):
            content = f"{text_of(content)}\n[{count(content)} image(s)]"
        if role == "tool":
            text = str(content)
            content = text if len(text) <= RESULT_CAP else text[:RESULT_CAP] + " […]"
        lines.append(f"### {role}\n{content}".rstrip())
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            lines.append(f"(calls {function.get('name')} {function.get('arguments', '')[:RESULT_CAP]})")
    text = "\n\n".join(lines)
    return text if len(text) <= TRANSCRIPT_CAP else "[… earliest part cut …]\n" + text[-TRANSCRIPT_CAP:]


def summary_request(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SUMMARY_PROMPT},
            {"role": "user", "content": "The conversation so far:\n\n" + render(messages)}]


@dataclass
class Compactor:
    window: int | None
    summarize: Summarize
    emit: Callable[[Any], None]
    record: Callable[[dict[str, Any], list[dict[str, Any]]], None]  # (summary message, kept turns)

    ratio: float = 1.0  # the provider's token count over our estimate, from the last reply
    sizes: Sizes = field(default_factory=Sizes)

    def estimate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """`estimate_tokens` without serialising the whole conversation every step."""
        return self.sizes.chars(messages, tools) // 4 + 1

    def calibrate(self, estimate: int, prompt_tokens: int) -> None:
        """Learn how far the estimate is from the provider's own count (code and non-English text
        take more tokens per character)."""
        if prompt_tokens > 0 and estimate > 0:
            self.ratio = min(max(prompt_tokens / estimate, 0.5), 3.0)

    def tokens(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        return int(self.estimate(messages, tools) * self.ratio)

    def needed(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
        return self.window is not None and self.tokens(messages, tools) > self.window * THRESHOLD

    async def before_request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        if self.needed(messages, tools):
            await self.compact(messages, tools)

    async def compact(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                      manual: bool = False) -> Compacted | None:
        """Replace the turns before the kept tail by a summary (in place); None: nothing to compact."""
        budget = int(self.window * TAIL_SHARE / self.ratio) if self.window else None
        cut = choose_cut(messages, budget)
        head = messages[1:cut]
        if not any(m.get("role") != "user" for m in head):  # only prompts (or a summary): nothing to gain
            return None
        before = self.tokens(messages, tools)
        summary = await self.summarize(head)
        message = {"role": "user", "content": f"{SUMMARY_HEADER}\n\n{summary.strip()}"}
        replaced = cut - 1
        messages[1:cut] = [message]
        self.record(message, messages[2:])
        event = Compacted(tokens_before=before, tokens_after=self.tokens(messages, tools),
                          replaced_messages=replaced, manual=manual)
        self.emit(event)
        return event
