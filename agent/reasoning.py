"""Reasoning models: the effort asked for, the reasoning streamed back, the thinking kept in history.

`reasoning = "off" | "low" | "medium" | "high"` is sent as litellm's `reasoning_effort`, which
litellm maps to each provider's own control (OpenAI's reasoning effort, an Anthropic thinking
budget, a Gemini thinking budget, DeepSeek's reasoner); with `drop_params` (agent/llm.py) a model
that cannot reason gets the request without it. "off" sends nothing: the model's own default.

A reply's reasoning arrives as `reasoning_content` deltas and, from Anthropic, as signed
`thinking` (or `redacted_thinking`) blocks. The blocks are kept exactly in the assistant message
(`thinking_blocks`, litellm's name) because Anthropic requires the last assistant turn of a
tool-use loop to start with them; they are sent only to providers that accept them, and only
while reasoning is on. Reasoning text without blocks is kept as `reasoning_content` for the
record and the replay, and never sent back.
"""

from __future__ import annotations

import functools
from typing import Any, Literal, get_args

Level = Literal["off", "low", "medium", "high"]
LEVELS: tuple[str, ...] = get_args(Level)
# providers whose adapters in litellm send `thinking_blocks` back as the provider's own blocks
BLOCK_PROVIDERS = ("anthropic", "bedrock", "vertex_ai")
PRIVATE_KEYS = ("thinking_blocks", "reasoning_content")


def request_args(level: str, model: str) -> dict[str, Any]:
    """What a request adds for `level`: nothing for a model litellm knows cannot reason (sent, it
    would be dropped with a warning on stderr every request; the session says so once instead)."""
    return {} if level == "off" or not takes_effort(model) else {"reasoning_effort": level}


@functools.lru_cache(maxsize=64)
def takes_effort(model: str) -> bool:
    """Whether litellm sends a reasoning effort to `model` (unknown OpenAI-compatible models: yes)."""
    import litellm  # loaded and configured by agent.llm before any request

    try:
        name, provider, *_ = litellm.get_llm_provider(model)
        return "reasoning_effort" in (litellm.get_supported_openai_params(model=name, custom_llm_provider=provider) or [])
    except Exception:  # noqa: BLE001 - an unroutable model fails its request with the reason
        return False


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
        """Take a streamed delta's reasoning; returns its new reasoning text ("" when none)."""
        for piece in getattr(delta, "thinking_blocks", None) or []:
            self._block(piece if isinstance(piece, dict) else dict(piece))
        text = getattr(delta, "reasoning_content", None) or ""
        self.text += text
        return text

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

    @classmethod
    def restored(cls, text: str, blocks: list[dict[str, Any]]) -> ThinkingCollector:
        """A collector holding what another process gathered (agent/llm_wire.py)."""
        collector = cls()
        collector.text = text
        collector._blocks = dict(enumerate(blocks))
        return collector

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
    provider = model.split("/", 1)[0] if "/" in model else "anthropic" if model.startswith("claude") else ""
    return provider in BLOCK_PROVIDERS


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
