"""The shapes a session file's lines must have to be read back: a line of another shape (a damaged
disk, a hand edit, another version) is set aside by `record.load`, never fatal."""

from __future__ import annotations

from typing import Any


def take(data: Any, kind: str, payload: Any) -> bool:
    """Add one record to `data`; False when it does not have the shape of its kind."""
    if kind == "meta" and isinstance(payload, dict):
        data.meta.update(payload)
    elif kind == "message" and _is_message(payload):
        data.messages.append(payload)
        data.history.append(payload)
    elif kind == "compaction" and isinstance(payload, dict) and _is_message(payload.get("summary")) \
            and isinstance(payload.get("kept"), list) and all(_is_message(m) for m in payload["kept"]):
        data.messages = [payload["summary"], *payload["kept"]]
    elif kind == "rewind" and isinstance(payload, dict) and _is_message(payload.get("cut")) \
            and isinstance(payload.get("messages"), list) and all(_is_message(m) for m in payload["messages"]):
        _rewound(data, payload["messages"], payload["cut"])
    elif kind == "event" and isinstance(payload, dict) and isinstance(payload.get("type"), str) \
            and _event_usable(payload):
        data.events.append(payload)
    elif kind == "state" and isinstance(payload, dict) and isinstance(payload.get("key"), str) \
            and _state_usable(payload["key"], payload.get("value")):
        data.state[payload["key"]] = payload.get("value")
    else:
        return False
    return True


ROLES = ("system", "user", "assistant", "tool")


def _rewound(data: Any, messages: list[Any], cut: Any) -> None:
    """A rewind (agent/session/rewind.py): the model sees `messages`; the history ends before `cut`."""
    data.messages = list(messages)
    at = next((i for i in range(len(data.history) - 1, -1, -1) if data.history[i] == cut), None)
    if at is not None:
        data.history = [*data.history[:at], *messages[-1:]]


def _state_usable(key: str, value: Any) -> bool:
    """A saved plan must load as a plan (the other values are checked by the workspace that reads them)."""
    if key != "plan" or value is None:
        return True
    from agent.planning.models import Plan

    try:
        Plan.model_validate(value)
    except ValueError:
        return False
    return True


def _is_message(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        return False
    content = message.get("content")
    if not (content is None or isinstance(content, (str, list))):
        return False
    if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
        return False
    calls = message.get("tool_calls")
    if calls is None:
        return True
    return isinstance(calls, list) and all(
        isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("function"), dict)
        and isinstance(c["function"].get("name"), str) for c in calls)


def _event_usable(event: dict[str, Any]) -> bool:
    """The events a resumed session reads back (todos, token totals) parse; others are replayed
    by the front ends, which skip what does not parse."""
    if event["type"] == "plan_updated":
        from agent.events import TodoItem

        try:
            todos = event.get("todos", [])
            return isinstance(todos, list) and all(TodoItem.model_validate(t) is not None for t in todos)
        except ValueError:
            return False
    if event["type"] == "usage":
        numbers = ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens",
                   "total_cache_write_tokens")
        return all(isinstance(event.get(k, 0), int) for k in numbers) and \
            isinstance(event.get("total_cost"), (int, float, type(None)))
    return True


def recorded_events(records: list[dict[str, Any]]) -> tuple[list[Any], int]:
    """The recorded events as typed events, for the replays, and how many of them did not parse (an
    unknown type from another version, a damaged or hand-edited one): skipped, counted for a note."""
    from agent.events import parse_event

    events: list[Any] = []
    skipped = 0
    for record in records:
        try:
            events.append(parse_event(record))
        except ValueError:
            skipped += 1
    return events, skipped


def skipped_note(skipped: int) -> str:
    """What a replay says about the recorded events it could not read."""
    return (f"{skipped} recorded event{'s' if skipped != 1 else ''} of an unknown or damaged shape "
            f"{'were' if skipped != 1 else 'was'} skipped; what {'they' if skipped != 1 else 'it'} recorded is not shown.")
