"""The intent router: what a user message is, by rule when it is obvious, else by the small model.

Rules decide cheaply and deterministically: a short approval is a `confirmation`; a message that
asks (an interrogative opening or a question mark, no imperative) is a `question`; a message that
lists three or more items is a `new_task` that needs a plan. Everything else goes to the small
model (config `small_model`, the main model when unset), whose JSON answer pydantic validates.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from agent.llm import LLM
from agent.planning.models import Classification

CONFIRM_RE = re.compile(
    r"^(y|yes|yep|ok|okay|sure|go|go ahead|go on|continue|proceed|approve|approved|do it|lgtm)[.! ]*$",
    re.IGNORECASE)
QUESTION_RE = re.compile(
    r"^(what|why|how|where|when|who|which|explain|describe)\b",
    re.IGNORECASE)
LIST_ITEM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+\S", re.MULTILINE)
# Questions that are really requests ("can you add tests?") are left to the model.
REQUEST_RE = re.compile(r"^(can|could|would|will) (you|we)\b", re.IGNORECASE)

PROMPT = """You route messages to a coding agent. Classify the user's latest message.
Answer with one JSON object and nothing else:
{"task_type": "new_task" | "follow_up" | "plan_change" | "question" | "confirmation" | "schedule", "needs_plan": true | false}
- new_task: a new piece of work; follow_up: more work on what was just done;
  plan_change: changes the plan being carried out; question: wants an answer, no changes;
  confirmation: approves or says to go on; schedule: asks for work to be done later or repeatedly
  (at a time, after a delay, every morning...), not now.
- needs_plan: true only for new work that takes several distinct steps (several files, features
  or phases); false for a one-step change, a question, or a small fix."""


def by_rule(text: str, plan_active: bool) -> Classification | None:
    """The classification when a rule decides it, else None."""
    stripped = text.strip()
    if CONFIRM_RE.match(stripped):
        return Classification(task_type="confirmation")
    if not plan_active and len(LIST_ITEM_RE.findall(stripped)) >= 3:
        return Classification(task_type="new_task", needs_plan=True)
    asks = stripped.endswith("?") or QUESTION_RE.match(stripped)
    if asks and not REQUEST_RE.match(stripped) and "\n" not in stripped:
        return Classification(task_type="question")
    return None


async def classify(llm: LLM, text: str, context: str, on_usage: Any) -> Classification:
    """The small model's classification (its own conversation, no tools, no streaming)."""
    messages = [{"role": "system", "content": PROMPT},
                {"role": "user", "content": f"{context}\n\nLatest message:\n{text}".strip()}]
    reply = await llm.complete(messages, [], lambda _text: None, lambda *_args: None)
    on_usage(reply)
    return parse_answer(reply.text)


def parse_answer(text: str) -> Classification:
    """The JSON object in the answer (fenced or bare); a useless answer counts as a new task."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        return Classification.model_validate(json.loads(match.group(0) if match else text))
    except (ValueError, ValidationError):
        # The model ignored the format: treat the message as work, planned only when it is long.
        return Classification(task_type="new_task", needs_plan=False)
