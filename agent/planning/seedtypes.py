"""Seed 002's task types for a user message, by rule (no model call: it is sent with every request).

`refactor`, `fix`, `explain`, `add_feature`, `question`, or `other` when no rule matches. Ours (the
intent router's `new_task`, `follow_up`...) says what to do with a message in a conversation; these
say what kind of work it asks for, the vocabulary an editor built on seed 002 shows.
"""

from __future__ import annotations

import re
from typing import Literal

SeedTaskType = Literal["refactor", "fix", "explain", "add_feature", "question", "other"]

_RULES: tuple[tuple[SeedTaskType, re.Pattern[str]], ...] = (
    ("refactor", re.compile(r"\b(refactor\w*|rename\w*|restructur\w*|clean(?:\s|-)?up|simplif\w*|extract\w*|"
                            r"reorgani[sz]\w*|tidy|dedup\w*)\b", re.I)),
    ("fix", re.compile(r"\b(fix\w*|bug\w*|broken|crash\w*|error\w*|fail\w*|exception|traceback|repair\w*|"
                       r"doesn'?t work|not working|regression)\b", re.I)),
    ("explain", re.compile(r"^\s*(explain|describe|walk me through|what does|what is|how does|why does|"
                           r"summari[sz]e)\b", re.I)),
    ("add_feature", re.compile(r"\b(add\w*|implement\w*|create\w*|build\w*|introduce\w*|support\w*|write|"
                               r"make|new|generate\w*)\b", re.I)),
)


def seed_task_type(text: str) -> SeedTaskType:
    """The first rule that matches the message (explain before fix for "explain this error")."""
    stripped = text.strip()
    if _RULES[2][1].search(stripped):
        return "explain"
    for kind, rule in (_RULES[0], _RULES[1], _RULES[3]):
        if rule.search(stripped):
            return kind
    return "question" if stripped.endswith("?") else "other"
