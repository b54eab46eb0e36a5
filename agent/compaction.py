"""Sessions longer than the context window: older turns become a summary, the task is kept.

Before a request would pass about 80% of the model's context window, the conversation before the
last few turns is replaced by one message. What the task needs is carried into it word for word
(`Carried`, given by the session): the user's own messages (their goal, constraints and
instructions), the current plan with each step's state, the todo list, the scratchpad when the
system prompt does not hold it, the files changed so far and the next step. Only the rest (what
was read, tried, decided and learned) is summarised by the small model. The cut is always before
a user message or an assistant turn, so a tool call and its result are never separated. The
session file keeps every message; a `compaction` line records the summary and the turns kept,
and a resume starts there.
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
REST_HEADING = "## Summary of the rest of the earlier conversation"
PROMPTS_CAP = 24_000  # characters of the user's messages carried (the first and the newest win)
PROMPT_CAP = 8_000  # characters of one message carried
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
KEPT_NOTE = ("\n\nKept word for word beside your summary, so do not repeat them: {kept}. Summarise what "
             "else happened.")

Summarize = Callable[[list[dict[str, Any]], list[str]], Awaitable[str]]  # (turns, what is kept) -> summary


@dataclass
class Carried:
    """What a compaction carries word for word (the session gives it: agent/session/carry.py)."""

    prompts: list[str] = field(default_factory=list)  # the user's own messages, oldest first
    plan: str = ""  # the structured plan, each step with its state
    todos: str = ""  # the todo list, each item with its state
    scratchpad: str = ""  # the agent's notes, when the system prompt does not carry them
    changed: list[str] = field(default_factory=list)  # files changed so far
    next_step: str = ""
    counts: dict[str, str] = field(default_factory=dict)  # section -> how it is described in `kept`

    def sections(self) -> list[tuple[str, str, str]]:
        """(heading, body, what /compact calls it) of each section that has something."""
        found = []
        if self.prompts:
            body = "\n\n".join(f"({n}) {text}" for n, text in enumerate(capped_prompts(self.prompts), 1))
            found.append(("## The user's messages so far, word for word (their goal, constraints and "
                          "instructions still apply)", body, f"your {len(self.prompts)} message(s)"))
        if self.plan:
            found.append(("## The current plan, each step with its state", self.plan,
                          self.counts.get("plan", "the plan")))
        if self.todos:
            found.append(("## The todo list", self.todos, self.counts.get("todos", "the todo list")))
        if self.scratchpad:
            found.append(("## Your scratchpad", self.scratchpad, "the scratchpad"))
        if self.changed:
            found.append(("## Files changed so far", "\n".join(f"- {p}" for p in self.changed),
                          f"the {len(self.changed)} changed file(s)"))
        if self.next_step:
            found.append(("## The next step", self.next_step, "the next step"))
        return found

    def kept(self) -> list[str]:
        return [name for _, _, name in self.sections()]

    def render(self) -> str:
        return "\n\n".join(f"{heading}\n{body}" for heading, body, _ in self.sections())


def describe(event: Compacted) -> str:
    """What a compaction kept and what it summarised, in one paragraph (/compact, the notices)."""
    kept = f" Kept word for word: {', '.join(event.kept)}." if event.kept else ""
    words = len(event.summary.split())
    return (f"Compacted {event.replaced_messages} messages: about {event.tokens_before:,} → {event.tokens_after:,} "
            f"tokens.{kept} Summarised: the rest of those messages, in {words} words.")


def capped_prompts(prompts: list[str]) -> list[str]:
    """The user's messages within PROMPTS_CAP: each capped, the first always, then the newest."""
    cut = [p if len(p) <= PROMPT_CAP else p[: PROMPT_CAP // 2] + "\n[…]\n" + p[-PROMPT_CAP // 2:] for p in prompts]
    kept, size = [cut[0]], len(cut[0])
    newest: list[str] = []
    for text in reversed(cut[1:]):
        if size + len(text) > PROMPTS_CAP:
            break
        newest.insert(0, text)
        size += len(text)
    left_out = len(cut) - 1 - len(newest)
    note = [f"[{left_out} message(s) between the first and these left out: the summary covers them]"] if left_out else []
    return kept + note + newest


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
        if isinstance(content, str) and content.startswith(SUMMARY_HEADER) and REST_HEADING in content:
            # what it carried is carried again, as it is now: only its summary is summarised again
            content = SUMMARY_HEADER + "\n" + content.split(REST_HEADING, 1)[1].strip()
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


def summary_request(messages: list[dict[str, Any]], kept: list[str] | None = None) -> list[dict[str, Any]]:
    prompt = SUMMARY_PROMPT + (KEPT_NOTE.format(kept=", ".join(kept)) if kept else "")
    return [{"role": "system", "content": prompt},
            {"role": "user", "content": "The conversation so far:\n\n" + render(messages)}]


def summary_message(carried: Carried, summary: str) -> dict[str, Any]:
    kept = carried.render()
    body = f"{kept}\n\n{REST_HEADING}\n{summary.strip()}" if kept else summary.strip()
    return {"role": "user", "content": f"{SUMMARY_HEADER}\n\n{body}"}


@dataclass
class Compactor:
    window: int | None
    summarize: Summarize
    emit: Callable[[Any], None]
    record: Callable[[dict[str, Any], list[dict[str, Any]]], None]  # (summary message, kept turns)

    carry: Callable[[], Carried] = Carried  # what the session keeps word for word
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
        carried = self.carry()
        summary = await self.summarize(head, carried.kept())
        message = summary_message(carried, summary)
        replaced = cut - 1
        messages[1:cut] = [message]
        self.record(message, messages[2:])
        event = Compacted(tokens_before=before, tokens_after=self.tokens(messages, tools),
                          replaced_messages=replaced, manual=manual, kept=carried.kept(), summary=summary.strip())
        self.emit(event)
        return event
