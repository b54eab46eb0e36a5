"""The host's protocol: newline-delimited JSON objects over its Unix socket.

Requests (client → host; `id` is echoed in the reply):
    {"type": "open", "id": 1, "session": "ID|prefix|last|new", "client": "run --attach", "options": {...}}
    {"type": "prompt", "id": 2, "text": "..."}              queued behind the running turn
    {"type": "approve", "id": 3, "approval_id": "ap_…", "decision": "allow_once", "feedback": null,
     "rejected_hunks": {"a.py": [1]}, "edited": {}}         (optional: an edit narrowed or rewritten)
    {"type": "stop", "id": 4}                                stops the running turn, drops the queued ones
    {"type": "detach", "id": 5}                              the run goes on
    {"type": "list", "id": 6}                                the live sessions and who is attached
    {"type": "run", "id": 7, "options": {...}, "env": {...}, "json": false, "color": false}
                                                             `coder-tui run` one-shot (agent/frontends/oneshot.py)
    {"type": "input", "id": 8, "text": "y"}                  a stdin line of that run (null: stdin closed)
    {"type": "set", "id": 9, "mode": "plan", "profile": "reviewer", "model": "...", "reasoning": "low",
     "plan": {"decision": "approve"}}                       settings from the next turn on (each optional),
                                                             a plan decision for the running turn
    {"type": "undo", "id": 10, "ref": null}                  restore the last checkpoint (no turn running)
A connection is attached to at most one session (the one `open` named).

Host → client: `{"type": "reply", "id": N, "ok": true, ...}` (or `"ok": false, "error": "..."`),
the session's events in the shapes of `coder-tui run --json`, and the host's own lines whose
types are in `HOST_TYPES` (who joined, whose turn starts, who answered an approval...).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from agent.config import first_problem
from agent.events import DecisionKind
from agent.hostplace import MAX_LINE  # noqa: F401 - a longer request line is refused
from agent.secrets import redact
from agent.textsafe import json_line

HOST_TYPES = frozenset({"reply", "replay_end", "client_joined", "client_left", "prompt_queued", "turn_started",
                        "turn_done", "approval_answered", "host_closing", "prompts_dropped", "mode_changed"})


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int = 0


class OpenRequest(_Request):
    type: Literal["open"]
    session: str = Field(min_length=1)  # an id, a unique prefix, `last`, or `new`
    client: str = "client"  # how the others see this client named
    options: dict[str, Any] = Field(default_factory=dict)  # SessionOptions fields (workspace, model, ...)
    live_only: bool = False  # join the session only if it is live (never open or resume it)
    env: dict[str, str] | None = None  # the client's environment (keys, *_BASE_URL): read for this session only


class PromptRequest(_Request):
    type: Literal["prompt"]
    text: str
    mentions: list[str] = Field(default_factory=list)  # workspace paths whose files are attached to the text


class ApproveRequest(_Request):
    type: Literal["approve"]
    approval_id: str | None = None  # None: the oldest pending approval
    decision: DecisionKind
    feedback: str | None = None
    rejected_hunks: dict[str, list[int]] = Field(default_factory=dict)  # path -> hunks not applied (an edit's)
    edited: dict[str, str] = Field(default_factory=dict)  # path -> the content the user wrote instead


class StopRequest(_Request):
    type: Literal["stop"]


class DetachRequest(_Request):
    type: Literal["detach"]


class SetRequest(_Request):
    type: Literal["set"]
    mode: str | None = None
    profile: str | None = None
    model: str | None = None
    reasoning: str | None = None
    plan: dict[str, Any] | None = None  # the decision a plan review (or failed step) waits for


class UndoRequest(_Request):
    type: Literal["undo"]
    ref: str | None = None


class ListRequest(_Request):
    type: Literal["list"]


class RunRequest(_Request):
    """`coder-tui run PROMPT` one-shot: a new session, printed for the client as `run` prints it."""

    type: Literal["run"]
    client: str = "run"
    options: dict[str, Any] = Field(default_factory=dict)  # SessionOptions fields, `prompt` included
    env: dict[str, str] = Field(default_factory=dict)  # the client's environment, for this session only
    color: bool = False  # the client's stdout is a terminal that takes colour


class InputRequest(_Request):
    type: Literal["input"]
    text: str | None = None  # one stdin line of a `run` request; None: stdin closed


Request = (OpenRequest | PromptRequest | ApproveRequest | StopRequest | DetachRequest | ListRequest | RunRequest
           | InputRequest | SetRequest | UndoRequest)
_REQUEST: TypeAdapter[Request] = TypeAdapter(Annotated[Request, Field(discriminator="type")])


class BadLine(Exception):
    """A line that is not a request (its message says what is wrong; `request_id` its id, if it had one)."""

    def __init__(self, message: str, request_id: int = 0) -> None:
        super().__init__(message)
        self.request_id = request_id


def parse_request(line: bytes) -> Request:
    try:
        data = json.loads(line)
    except ValueError:
        raise BadLine(f"not a JSON object: {line[:60]!r}") from None
    except RecursionError:  # `[[[[…` a hundred thousand deep: an answer, not a traceback
        raise BadLine("a request nests too deeply to be read") from None
    if not isinstance(data, dict) or "type" not in data:
        raise BadLine("a request is a JSON object with a `type`")
    try:
        return _REQUEST.validate_python(data)
    except RecursionError:
        raise BadLine("a request nests too deeply to be read", _id_of(data)) from None
    except ValidationError as exc:
        where, problem = first_problem(exc, "request")
        raise BadLine(f"invalid {str(data.get('type'))[:30]} request ({where}: {problem})", _id_of(data)) from None


def _id_of(data: dict[str, Any]) -> int:
    raw_id = data.get("id")
    return raw_id if isinstance(raw_id, int) else 0


def encode(data: dict[str, Any]) -> bytes:
    """One line of host output (bidi, C1 and U+2028/9 as \\u escapes, secrets masked)."""
    return (json_line(redact(json.dumps(data, ensure_ascii=False))) + "\n").encode()


def event_line(event: Any) -> bytes:
    """An event as `coder-tui run --json` prints it."""
    return (json_line(redact(event.model_dump_json())) + "\n").encode()


def reply(request_id: int, **fields: Any) -> bytes:
    return encode({"type": "reply", "id": request_id, "ok": True, **fields})


def refusal(request_id: int, error: str) -> bytes:
    return encode({"type": "reply", "id": request_id, "ok": False, "error": error})
