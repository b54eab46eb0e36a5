"""A scripted model for parents and their children: each request is answered by who asks.

A child's first user message ends with `Task: NAME ...`; the script for NAME is a list of replies
taken in order by that child's requests. The parent's requests (no `Task:`) take the `parent` list.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from tests.fakellm import Reply

TASK = re.compile(r"Task: (\S+)")


def first_user(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else str(content)
    return ""


class ByAsker:
    """A FakeLLM responder: replies per asker (the parent, or a child named by its task)."""

    def __init__(self, scripts: dict[str, list[Reply]]) -> None:
        self.scripts = {name: list(replies) for name, replies in scripts.items()}
        self.asked: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        found = TASK.search(first_user(body))
        who = found.group(1) if found else "parent"
        with self._lock:
            self.asked[who] = self.asked.get(who, 0) + 1
            replies = self.scripts.get(who) or []
            if not replies:
                return Reply(status=500, error_message=f"fake LLM: no reply scripted for {who}")
            return replies.pop(0)
