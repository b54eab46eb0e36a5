"""Per-request work litellm does on every message that our conversations never need.

Version-guarded like the overrides in agent/llm_usage.py (same litellm range); each falls back to
litellm's own code for anything it was not checked against, and tests/core/test_llm_overhead.py
fails when an upgrade stops it applying.
"""

from __future__ import annotations

from typing import Any

from agent.llm_usage import _litellm_checked


def copy_messages_without_signature_scan() -> None:
    """Let litellm's request setup copy the conversation without its per-message signature walk.

    Before every request to a non-Gemini model litellm copies every message and tool call to cut
    Gemini thought signatures out of tool call ids, through per-object `hasattr` probes: O(history)
    and about half a millisecond a step at 100 turns. Our ids carry no signature unless a Gemini
    model wrote them; when no id holds one, the same copies (each message and tool call a new dict,
    as litellm makes them) are made directly. Anything else goes through litellm's own walk.
    """
    if not _litellm_checked():
        return
    import litellm.utils as utils

    real = utils._remove_thought_signatures_from_messages
    if getattr(real, "copies_directly", False):
        return

    def remove(messages: list[Any], thought_signature_separator: str) -> list[Any]:
        copies = _plain_copies(messages, thought_signature_separator)
        return copies if copies is not None else real(messages, thought_signature_separator)

    remove.copies_directly = True  # type: ignore[attr-defined]
    utils._remove_thought_signatures_from_messages = remove


def _plain_copies(messages: list[Any], separator: str) -> list[dict[str, Any]] | None:
    """Copies of plain-dict `messages` whose ids hold no `separator`; None for anything else."""
    copies = []
    for message in messages:
        if type(message) is not dict:
            return None
        copy = message.copy()
        if _signed(message.get("tool_call_id"), separator):
            return None
        calls = message.get("tool_calls")
        if message.get("role") == "assistant" and isinstance(calls, list):
            if any(type(call) is not dict or _signed(call.get("id"), separator) for call in calls):
                return None
            copy["tool_calls"] = [call.copy() for call in calls]
        copies.append(copy)
    return copies


def _signed(value: Any, separator: str) -> bool:
    return isinstance(value, str) and separator in value


def no_price_for_a_stream_not_read_yet() -> None:
    """Let litellm skip pricing a streamed request at its start, before any token has arrived.

    When a streamed request starts litellm runs its whole cost calculation (model lookups, the
    provider's pricing rules) on the stream object itself, about half a millisecond a step, and
    keeps the result (None, or 0.0 on some routes) in the stream's hidden params, which we never
    read: a reply's cost is ours, from the provider's usage (agent/llm_usage.py). Any other
    result, a finished response included, is still priced by litellm.
    """
    if not _litellm_checked():
        return
    from litellm.litellm_core_utils.litellm_logging import Logging
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

    real = Logging.response_cost_calculator
    if getattr(real, "skips_streams", False):
        return

    def price(self: Any, result: object, *args: Any, **kwargs: Any) -> float | None:
        if type(result) is CustomStreamWrapper:
            return None
        return real(self, result, *args, **kwargs)

    price.skips_streams = True  # type: ignore[attr-defined]
    Logging.response_cost_calculator = price  # type: ignore[method-assign,assignment]
