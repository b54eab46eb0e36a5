"""Watches the room for triggers: remote edits that complete an `@<name>` line, and chat.

Detection runs inside pycrdt's observer callback, where the document cannot be touched; found
triggers are anchored (a sticky position on the prompt line's start, so a queued trigger still
finds its line after others edited above it) right after the update is applied, then handed on
in order.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from agent.oct.documents import RoomDocuments
from agent.oct.positions import AFTER
from agent.oct.triggers import Trigger, mention_pattern, prompt_from_chat, triggers_in_delta

log = logging.getLogger(__name__)


class TriggerWatcher:
    def __init__(self, docs: RoomDocuments, name: str, on_trigger: Callable[[Trigger], None]) -> None:
        self.docs = docs
        self.pattern = mention_pattern(name)
        self._on_trigger = on_trigger
        self._pending: list[Trigger] = []
        docs.on_remote_text_change(self._collect)
        docs.on_after_remote(self._flush)

    def _collect(self, path: str, delta: list[dict[str, Any]], before: int, origin: str) -> None:
        text = self.docs.text(path)
        for trigger in triggers_in_delta(path, delta, before, lambda: str(text), self.pattern):
            self._pending.append(dataclasses.replace(trigger, origin=origin))

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        for trigger in pending:
            anchor = self.docs.positions(trigger.path or "").anchor(trigger.line_offset, AFTER)
            self._on_trigger(dataclasses.replace(trigger, anchor=anchor))

    def chat(self, origin: str, message: Any) -> Trigger | None:
        """The trigger in a chat message that mentions the agent, if any."""
        if not isinstance(message, str):
            return None
        prompt = prompt_from_chat(message, self.pattern)
        if prompt is None:
            return None
        return Trigger(source="chat", prompt=prompt, origin=origin)
