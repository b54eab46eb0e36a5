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
record and the replay, and never sent back.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

Level = Literal["off", "low", "medium", "high"]
LEVELS: tuple[str, ...] = get_args(Level)
# Providers that take `thinking_blocks` back: Anthropic's API (the built-in client turns them into
# its blocks), litellm's Bedrock and Vertex adapters, and a LiteLLM proxy (which does the same
# for the Claude behind it: without them its second tool-loop request is refused).
BLOCK_PROVIDERS = ("anthropic", "bedrock", "vertex_ai", "litellm_proxy")
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


def for_request(messages: list[dict[str, Any]], model: str, level: str) -> list[dict[str, Any]]:
    """The conversation as `model` may receive it: thinking blocks only for a provider that takes
    them back while reasoning is on (another provider rejects foreign blocks, and Anthropic rejects
    thinking blocks when thinking is off), reasoning text never. Messages without either are
    passed as they are (no copy of a long history for nothing)."""
    keep = level != "off" and provider_keeps_blocks(model)
    if not any(key in message for message in messages for key in PRIVATE_KEYS):
        return messages
    out = []
    for message in messages:
        if any(key in message for key in PRIVATE_KEYS):
            message = {k: v for k, v in message.items() if k == "thinking_blocks" and keep or k not in PRIVATE_KEYS}
        out.append(message)
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
