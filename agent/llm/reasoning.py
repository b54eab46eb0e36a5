"""Reasoning models: the effort asked for, the reasoning streamed back, the thinking kept in history.

`reasoning = "off" | "low" | "medium" | "high"` becomes each protocol's own control: Chat
Completions' `reasoning_effort`, the Responses API's `reasoning.effort` (with a summary asked
for), Anthropic's `thinking` (a token budget, or adaptive thinking with `output_config.effort` for
the models whose facts say so), and litellm's `reasoning_effort` on the litellm path. "off" sends
nothing: the model's own default. A model the facts (agent/llm/facts.py) know cannot reason gets
no effort, and the session says so once.

A reply's reasoning arrives as `reasoning_content` deltas and, from Anthropic, as signed
`thinking` (or `redacted_thinking`) blocks. The blocks are kept exactly in the assistant message
(`thinking_blocks`, litellm's name) because Anthropic requires the last assistant turn of a
tool-use loop to start with them; they are sent only to providers that accept them, and only
while reasoning is on. Reasoning text without blocks is kept as `reasoning_content` for the
record and the replay, and sent back only to DeepSeek, on tool-call turns (its thinking mode
requires it there).

Anthropic's rules for thinking in a conversation (its extended-thinking and tool-use docs): a
block comes back byte for byte or not at all (a changed one is refused: "cannot be modified",
"Invalid `signature`"); blocks of past turns may be left out; with thinking on, the last assistant
turn, when it called tools, must start with its blocks, so one tool loop keeps one thinking
setting. Two consequences here:
- `for_record`: a block that masking a secret would change is not written to the session file;
  its text is kept (masked) as `reasoning_content`, and the turn goes back without blocks;
- `request_level`: while a Claude tool loop goes on whose last turn has no blocks (begun with
  reasoning off, by another model, or resumed without its blocks), requests go with thinking off
  until the model ends the loop; the next loop thinks at the level asked for (`held_note` says so).
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from agent.secrets import contains_secret

Level = Literal["off", "low", "medium", "high"]
LEVELS: tuple[str, ...] = get_args(Level)
# Providers that take `thinking_blocks` back: Anthropic's API (the built-in client turns them into
# its blocks), litellm's Bedrock and Vertex adapters, and a LiteLLM proxy (which does the same
# for the Claude behind it: without them its second tool-loop request is refused).
BLOCK_PROVIDERS = ("anthropic", "bedrock", "vertex_ai", "litellm_proxy")
# Providers that take the reasoning text of a tool-call turn back: DeepSeek, whose thinking mode (on
# by default) refuses a request whose tool-call turns lack it ("The `reasoning_content` in the
# thinking mode must be passed back to the API"); a turn without one (another model's) sends "".
TEXT_PROVIDERS = ("deepseek",)
PRIVATE_KEYS = ("thinking_blocks", "reasoning_content")
# Anthropic's thinking budgets per level (litellm's own: the same request on either path)
BUDGETS = {"low": 1024, "medium": 2048, "high": 4096}


def request_args(level: str, model: str) -> dict[str, Any]:
    """What a litellm request adds for `level`: nothing for a model known not to reason (sent, it
    would be dropped with a warning on stderr every request; the session says so once instead)."""
    return {} if level == "off" or not takes_effort(model) else {"reasoning_effort": level}


def takes_effort(model: str) -> bool:
    """Whether `model` takes a reasoning effort: as its facts say; a model they do not know, yes on
    an OpenAI-compatible server (a local reasoning model) and no for Anthropic (an old Claude)."""
    from agent.llm.facts import facts
    from agent.llm.routing import provider_prefix

    known = facts(model)
    if known.reasoning is not None:
        return known.reasoning
    if known.known:
        return False
    return provider_prefix(model) not in ("anthropic", "bedrock", "vertex_ai")


def unsupported_note(model: str, level: str) -> str:
    """The one-line notice for a reasoning level the model cannot take."""
    return (f"{model} takes no reasoning effort (litellm knows it as a model that does not reason): "
            f"reasoning {level} has no effect on it")


def parse_level(text: str) -> str:
    """`text` as a level; ValueError with a one-line message otherwise."""
    level = text.strip().lower()
    if level not in LEVELS:
        raise ValueError(f"reasoning is one of {', '.join(LEVELS)} (got {text!r})")
    return level


class ThinkingCollector:
    """Gathers one reply's reasoning: the text as it streams, and the thinking blocks whole."""

    def __init__(self) -> None:
        self.text = ""
        self._blocks: dict[int, dict[str, Any]] = {}

    def absorb(self, delta: Any) -> str:
        """Take a streamed delta's reasoning (an object or a dict: `thinking_blocks`,
        `reasoning_content`, OpenRouter's `reasoning`); returns its new reasoning text ("" when none)."""
        read = delta.get if isinstance(delta, dict) else lambda name: getattr(delta, name, None)
        for piece in read("thinking_blocks") or []:
            self._block(piece if isinstance(piece, dict) else dict(piece))
        text = read("reasoning_content") or read("reasoning") or ""
        text = text if isinstance(text, str) else ""
        self.text += text
        return text

    def add_text(self, text: str) -> None:
        self.text += text

    def add_block(self, index: int, piece: dict[str, Any]) -> None:
        """A piece of the thinking block at `index`: its text, its signature, or a redacted block whole."""
        self._block({**piece, "index": index})

    def _block(self, piece: dict[str, Any]) -> None:
        index = piece.get("index", len(self._blocks))
        if piece.get("type") == "redacted_thinking":
            self._blocks[index] = {"type": "redacted_thinking", "data": piece.get("data", "")}
            return
        block = self._blocks.setdefault(index, {"type": "thinking", "thinking": "", "signature": ""})
        block["thinking"] += piece.get("thinking") or ""
        if piece.get("signature"):
            block["signature"] = piece["signature"]

    def blocks(self) -> list[dict[str, Any]]:
        return [self._blocks[i] for i in sorted(self._blocks)]

    def message_fields(self) -> dict[str, Any]:
        """What the reply's assistant message keeps: its blocks, else its reasoning text."""
        if self._blocks:
            return {"thinking_blocks": self.blocks()}
        return {"reasoning_content": self.text} if self.text else {}


def estimated_tokens(text: str, completion_tokens: int) -> int:
    """Reasoning tokens when the provider reports none apart (Anthropic counts them in its output
    tokens): about four characters a token, never more than the reply's output."""
    return min(len(text) // 4, completion_tokens) if text else 0


def provider_keeps_blocks(model: str) -> bool:
    from agent.llm.routing import provider_prefix

    return provider_prefix(model) in BLOCK_PROVIDERS


def signs_thinking(model: str, messages: list[dict[str, Any]]) -> bool:
    """Whether `model` is a Claude that signs its thinking: Anthropic's API, or Bedrock, Vertex and a
    LiteLLM proxy when the name says Claude or the conversation already holds its blocks (a proxy
    alias that names no Claude is known only once it has sent blocks)."""
    from agent.llm.routing import provider_prefix

    provider = provider_prefix(model)
    if provider == "anthropic":
        return True
    return provider in BLOCK_PROVIDERS and ("claude" in model.lower() or any(m.get("thinking_blocks") for m in messages))


def loop_without_thinking(messages: list[dict[str, Any]], model: str) -> bool:
    """Whether the conversation ends inside a Claude tool loop whose last assistant turn (consecutive
    assistant messages, as Anthropic merges them) called tools without starting with thinking blocks."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if last is None:
        return False
    first = last
    while first > 0 and messages[first - 1].get("role") == "assistant":
        first -= 1
    turn = messages[first : last + 1]
    return (any(m.get("tool_calls") for m in turn) and not turn[0].get("thinking_blocks")
            and signs_thinking(model, messages))


def request_level(messages: list[dict[str, Any]], model: str, level: str) -> str:
    """The level a request goes with: `level`, or "off" while a Claude tool loop without thinking goes
    on (Anthropic refuses thinking there: the last turn must start with its blocks)."""
    return "off" if level != "off" and loop_without_thinking(messages, model) else level


def held(messages: list[dict[str, Any]], model: str, level: str) -> tuple[str, str] | None:
    """When `level` waits for the end of the tool loop the conversation is in (`request_level`): a
    key naming that loop and the level (a note about it is said once), else None."""
    if level == "off" or not loop_without_thinking(messages, model):
        return None
    last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    return f"tool loop after message {last}", level


def held_note(model: str, level: str) -> str:
    """What the user is told when `level` waits for the end of the current tool loop."""
    return (f"reasoning {level} starts when {model} finishes the tool calls it is in the middle of: they were "
            "made without thinking that can be sent back, and Anthropic refuses thinking there; until then it "
            "works without thinking")


def for_record(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant message as the session file keeps it. Secrets are masked in the file, and a signed
    block changed by the mask would be refused when a resumed session sends it back: a message whose
    blocks hold a secret (text, signature or redacted data) keeps no blocks, only its reasoning as
    text (masked with the rest of the line). Resumed, Anthropic takes that turn without its blocks
    (a past turn), or the tool loop it leaves open goes on without thinking (`request_level`)."""
    blocks = message.get("thinking_blocks")
    if not blocks or not contains_secret(json.dumps(blocks, ensure_ascii=False)):
        return message
    kept = {k: v for k, v in message.items() if k != "thinking_blocks"}
    kept["reasoning_content"] = shown_text(message)
    return kept


def for_request(messages: list[dict[str, Any]], model: str, level: str) -> list[dict[str, Any]]:
    """The conversation as `model` may receive it: thinking blocks only for a provider that takes
    them back while reasoning is on (another provider rejects foreign blocks, and Anthropic rejects
    thinking blocks when thinking is off), reasoning text only on DeepSeek's tool-call turns.
    Messages with nothing to take out or add are passed as they are (no copy of a long history for
    nothing)."""
    from agent.llm.routing import provider_prefix

    keep = level != "off" and provider_keeps_blocks(model)
    text = provider_prefix(model) in TEXT_PROVIDERS
    if not any(_private(message, text) for message in messages):
        return messages
    return [_sent(message, keep, text) if _private(message, text) else message for message in messages]


def _private(message: dict[str, Any], text: bool) -> bool:
    return any(key in message for key in PRIVATE_KEYS) or (text and bool(message.get("tool_calls")))


def _sent(message: dict[str, Any], keep: bool, text: bool) -> dict[str, Any]:
    out = {k: v for k, v in message.items() if k == "thinking_blocks" and keep or k not in PRIVATE_KEYS}
    if text and message.get("tool_calls"):
        out["reasoning_content"] = str(message.get("reasoning_content") or "")
    return out


def shown_text(message: dict[str, Any]) -> str:
    """The reasoning an assistant message records, as a reader sees it (redacted blocks say so)."""
    if text := message.get("reasoning_content"):
        return str(text)
    parts = []
    for block in message.get("thinking_blocks") or []:
        if block.get("type") == "redacted_thinking":
            parts.append("[redacted thinking]")
        elif block.get("thinking"):
            parts.append(str(block["thinking"]))
    return "\n\n".join(parts)
