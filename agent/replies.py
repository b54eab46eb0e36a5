"""Replies that are not what they should be: cut off, empty, filtered, or with calls in the text.

- Cut off by the output token limit (finish reason `length`) in the middle of a tool call: the
  call's arguments are incomplete, so it is never run. The model is told what happened and asked
  to split the change into smaller calls; when litellm knows the model can write more than the
  reply got, the limit is raised to the model's maximum for the rest of the session.
- Empty (no text, no calls): asked for again once, then reported in one line.
- Stopped by the provider's content filter (finish reason `content_filter`): one line saying so.
- Calls written in the text (agent/llm/toolcalls_text.py) become ordinary calls.
"""

from __future__ import annotations

from typing import Any

from agent.events import WarningEvent
from agent.llm import LLM, LLMError, ModelReply
from agent.llm.errors import provider_name
from agent.llm.toolcalls_text import TextCallFilter, extract

CUT_OFF = "length"
CUT_OFF_WARNING = WarningEvent(message="the model's reply was cut off by the output token limit in the middle of a "
                                       "tool call; it was not run and the model is asked to split it")


def _model(llm: Any) -> LLM:
    """The model answering now (the loop may hold a fallback chain, agent/modelchain.py)."""
    return getattr(llm, "current", llm)


def is_empty(reply: ModelReply) -> bool:
    return not reply.text.strip() and not reply.tool_calls and reply.finish_reason != "content_filter"


def empty_failure(llm: Any) -> LLMError:
    llm = _model(llm)
    return LLMError(f"{llm.model} ({provider_name(llm.model, llm.api_base)}) sent an empty reply twice (no text, "
                    "no tool calls): send the message again, rephrase it, or switch model", "empty_reply")


def check_filtered(reply: ModelReply, llm: Any) -> None:
    """Raise when the provider's content filter stopped the reply."""
    if reply.finish_reason == "content_filter":
        llm = _model(llm)
        provider = provider_name(llm.model, llm.api_base)
        raise LLMError(f"{provider}'s content filter stopped {llm.model}'s reply (finish reason content_filter): "
                       "rephrase the request or leave out what it objects to", "content_filter")


def take_text_calls(reply: ModelReply, shown: TextCallFilter) -> None:
    """Calls written in the text of a reply without structured ones become its calls."""
    if reply.tool_calls or not shown.known:
        shown.release()
        return
    calls, text = extract(reply.text, shown.known)
    if calls:
        reply.tool_calls, reply.text = calls, text
        shown.withheld.clear()
    elif not unfinished_text_call(reply):
        shown.release()


def unfinished_text_call(reply: ModelReply) -> bool:
    return reply.finish_reason == CUT_OFF and reply.text.rfind("<tool_call>") > reply.text.rfind("</tool_call>")


def cut_off(reply: ModelReply) -> bool:
    """The reply stopped at the output limit while writing a tool call."""
    return reply.finish_reason == CUT_OFF and (bool(reply.tool_calls) or unfinished_text_call(reply))


def cut_off_note(reply: ModelReply, llm: Any) -> str:
    """What the model is told (and the limit raised, when the model allows more)."""
    names = ", ".join(dict.fromkeys(c.name for c in reply.tool_calls)) or "a tool call written in the text"
    raised = _raise_limit(_model(llm), reply.completion_tokens)
    more = f" The output limit is now raised to {raised} tokens." if raised else ""
    return (f"Not run: your reply was cut off by the output token limit ({reply.completion_tokens or 'unknown'} "
            f"tokens) while you were writing {names}, so the arguments are incomplete.{more} Make the change "
            "in smaller steps: several calls that each write or replace fewer lines.")


def _raise_limit(llm: LLM, used: int) -> int | None:
    """The model's own output maximum, when its facts know it and it is above what this reply got."""
    from agent.llm.facts import facts

    ceiling = facts(llm.model).max_output or 0
    if not used or ceiling <= used or (llm.max_tokens or 0) >= ceiling:
        return None
    llm.max_tokens = int(ceiling)
    return llm.max_tokens
