"""What a parent's front ends hear of a child: its events are recorded in the child's own session
file; the parent's stream gets `subagent_update` (the current tool and the spend), and the child's
approvals themselves, naming the child and its task, so that they reach the one approval queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.events import ApprovalRequired, ApprovalResolved, SubagentUpdate, ToolCallEvent, Usage

Emit = Callable[[Any], None]


class Relay:
    """The child's sink: it passes on, to the parent's `emit`, what the parent's front ends show."""

    def __init__(self, parent_emit: Emit, parent_id: str, asker: str) -> None:
        self.parent_emit = parent_emit
        self.parent_id = parent_id
        self.child_id = ""  # known once the child's session is opened
        self.call_id = ""  # the parent's `agent` call it answers
        self.asker = asker
        self.tool: str | None = None
        self.detail = ""
        self.status: str = "working"
        self.tokens = 0
        self.cost: float | None = None
        self.waiting: set[str] = set()  # approval ids of the child that wait for an answer

    def __call__(self, event: Any) -> None:
        if not self.child_id:
            return  # the child's own opening notices (its file has them)
        if isinstance(event, ToolCallEvent):
            self.tool, self.detail = event.tool, _key(event.args)
            self._update()
        elif isinstance(event, Usage):
            self.tokens = event.total_prompt_tokens + event.total_completion_tokens
            self.cost = event.total_cost
            self._update()
        elif isinstance(event, ApprovalRequired):
            self.waiting.add(event.approval_id)
            self.status, self.detail = "waiting", f"approval: {event.summary}"[:200]
            self.parent_emit(event.model_copy(update=self.naming()))
            self._update()
        elif isinstance(event, ApprovalResolved):
            self.waiting.discard(event.approval_id)
            self.parent_emit(event)
            self.status = "waiting" if self.waiting else "working"
            self._update()

    def naming(self) -> dict[str, str]:
        """The fields that say a subagent asks, and which."""
        return {"child_id": self.child_id, "parent_id": self.parent_id, "asker": self.asker}

    def _update(self) -> None:
        self.parent_emit(SubagentUpdate(child_id=self.child_id, parent_id=self.parent_id, call_id=self.call_id,
                                        status=self.status,  # type: ignore[arg-type]
                                        tool=self.tool, detail=self.detail, tokens=self.tokens, cost=self.cost))


def _key(args: dict[str, Any]) -> str:
    for key in ("file_path", "path", "command", "url", "pattern", "query"):
        if isinstance(args.get(key), str):
            return str(args[key])[:120]
    return ""
