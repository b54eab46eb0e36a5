"""The event stream: one schema for every front end.

The loop emits these; the TUI renders them, `coder-tui run --json` prints one per line, the
session file records them. Each event is a pydantic model whose `type` field names it, and
`Event` is the discriminated union used to parse them back (`parse_event`).

No `from __future__ import annotations` here: with it, pydantic evaluates every field's annotation
from its text when the class is made, about a fifth of this module's import (issue 32).
"""

import functools
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Mode = Literal["plan", "ask", "allow"]
ApprovalKind = Literal["edit", "exec", "network", "read"]  # read: a tool an `ask` rule names
DecisionKind = Literal["allow_once", "allow_all", "deny", "stop"]
CompletionReason = Literal["answered", "max_steps", "stopped", "error", "budget", "denied"]
# denied: only in `run`'s output, never emitted by a session: stdin closed on an approval or a plan (exit code 3)
TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]
TaskType = Literal["new_task", "follow_up", "plan_change", "question", "confirmation",
                   "schedule", "explore", "repository"]  # the last three: seed 001 intents (planning/intents.py)
StepStatus = Literal["pending", "in_progress", "done", "failed", "skipped"]


class _Event(BaseModel):
    # defer_build: each event's validator is built when the first one is made, not at import
    # (about 70 ms of the app's and `run`'s start for forty kinds, most never seen in a session)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: str  # each event narrows it to its own name; declared here so that it leads every event's JSON

    def to_json(self) -> str:
        return self.model_dump_json()


class RunStarted(_Event):
    type: Literal["run_started"] = "run_started"
    run_id: str
    session_id: str
    mode: Mode
    model: str
    workspace: str
    prompt: str = ""


class StepStarted(_Event):
    """A model request begins (the agent is thinking)."""

    type: Literal["step_started"] = "step_started"
    iteration: int


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ReasoningDelta(_Event):
    """A piece of the model's reasoning (thinking), streamed before its answer (agent/llm/reasoning.py)."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


class ToolCallEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    call_id: str
    tool: str
    args: dict[str, Any]


class ToolResultEvent(_Event):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    tool: str
    ok: bool
    output: str | None = None
    error: str | None = None
    duration: float = 0.0


class FilePreview(BaseModel):
    """One file an edit would change, as shown for approval."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    path: str
    diff: str
    hunks: int
    created: bool = False
    deleted: bool = False
    protected: str | None = None  # what the file is to coder-tui when it reads it as configuration or instructions


class ApprovalDetails(BaseModel):
    """What an approval is about, declared once: the `approval_required` event carries it with
    the diffs to show, the loop's `ApprovalRequest` (agent/approval.py) with the changes themselves."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    approval_id: str
    call_id: str
    tool: str
    args: dict[str, Any]
    kind: ApprovalKind
    summary: str = ""
    command: str | None = None
    cwd: str | None = None
    timeout: int | None = None
    url: str | None = None
    # a subagent's approval, asked through its parent's approver: who asks (agent/subagents)
    child_id: str | None = None
    parent_id: str | None = None
    asker: str | None = None  # "coder #2: find the config loader"


class ApprovalRequired(ApprovalDetails, _Event):
    type: Literal["approval_required"] = "approval_required"
    files: list[FilePreview] = Field(default_factory=list)


class ApprovalResolved(_Event):
    type: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    decision: DecisionKind
    feedback: str | None = None
    rejected_hunks: dict[str, list[int]] = Field(default_factory=dict)
    edited_files: list[str] = Field(default_factory=list)
    by: str | None = None  # who answered, when not the front end's own user (a room peer)


class DiagnosticInfo(BaseModel):
    """A problem a language server reports in a file (agent/lsp): 1-based line and column."""

    line: int
    column: int
    severity: Literal["error", "warning", "information", "hint"]
    message: str
    source: str = ""  # the checker (basedpyright, ts, ...)
    code: str = ""


class FileChanged(_Event):
    type: Literal["file_changed"] = "file_changed"
    path: str
    diff: str
    line_start: int
    line_end: int
    reason: str = ""
    # what the file's language server reports after the change, errors first (None: no server checked it)
    diagnostics: list[DiagnosticInfo] | None = None


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(description="Stable identifier of the item, e.g. '1' or 'tests'.")
    content: str = Field(description="What this step does, in a short sentence.")
    status: TodoStatus = Field(default="pending")


class PlanUpdated(_Event):
    type: Literal["plan_updated"] = "plan_updated"
    todos: list[TodoItem]


class CheckpointEvent(_Event):
    type: Literal["checkpoint"] = "checkpoint"
    id: str
    label: str
    restored: str | None = None  # set on the restore point taken just before rolling back to this checkpoint


class Usage(_Event):
    """Tokens of one model request and of the session so far. `prompt_tokens` counts the whole
    prompt; of it, `cached_tokens` were read from the provider's prompt cache (billed at a
    fraction) and `cache_write_tokens` were written to it; the rest is uncached."""

    type: Literal["usage"] = "usage"
    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    total_prompt_tokens: int = 0
    total_completion_tokens: int = 0
    total_cost: float | None = None
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    total_cached_tokens: int = 0
    total_cache_write_tokens: int = 0
    reasoning_tokens: int = 0  # of completion_tokens, those the model spent reasoning
    total_reasoning_tokens: int = 0


class Retrying(_Event):
    type: Literal["retrying"] = "retrying"
    why: str
    attempt: int
    delay: float
    reset_at: str | None = None  # ISO 8601 (UTC): when a rate limit resets and the wait ends


class Published(_Event):
    """Unpublished GitHub edits became one commit on the work branch (the end of a headless run,
    or the app's quit prompt)."""

    type: Literal["published"] = "published"
    repository: str
    branch: str
    commit: str
    compare_url: str
    files: list[str] = Field(default_factory=list)


class Compacted(_Event):
    """Older turns were replaced by a summary so the conversation fits the context window."""

    type: Literal["compacted"] = "compacted"
    tokens_before: int
    tokens_after: int
    replaced_messages: int
    manual: bool = False
    kept: list[str] = Field(default_factory=list)  # what was carried word for word ("the todo list (4 items)")
    summary: str = ""  # what the small model wrote for the rest


class ModelFallback(_Event):
    """The model kept failing (or found the request too long); the next configured one takes over."""

    type: Literal["model_fallback"] = "model_fallback"
    from_model: str
    to_model: str
    reason: str


class McpServerState(_Event):
    """An MCP server started, failed to start, or stopped; `tools` are the ones it offers now."""

    type: Literal["mcp_server"] = "mcp_server"
    server: str
    state: Literal["running", "failed", "stopped"]
    message: str = ""
    tools: list[str] = Field(default_factory=list)


class ScratchpadUpdated(_Event):
    """The agent's own notes changed (seed 001's scratchpad and observations)."""

    type: Literal["scratchpad"] = "scratchpad"
    text: str
    observations: list[str] = Field(default_factory=list)


class FileReady(_Event):
    """A stream agent's code block saved as a file (seed 003's StreamAgent), after its approval."""

    type: Literal["file_ready"] = "file_ready"
    path: str
    lines: int


class SubagentStarted(_Event):
    """A subagent (a child session) began a task the parent's `agent` tool call handed it."""

    type: Literal["subagent_started"] = "subagent_started"
    child_id: str
    parent_id: str
    call_id: str
    agent: str  # the agent definition (profile) it runs as
    task: str
    model: str
    mode: Mode


class SubagentUpdate(_Event):
    """What a running subagent is doing now: its current tool (None: thinking) and its spend."""

    type: Literal["subagent_update"] = "subagent_update"
    child_id: str
    parent_id: str
    call_id: str = ""  # the parent's `agent` call
    status: Literal["working", "waiting"] = "working"
    tool: str | None = None
    detail: str = ""  # the tool's key argument, or what it waits for
    tokens: int = 0
    cost: float | None = None


class SubagentFinished(_Event):
    """A subagent ended; its report is the `agent` tool call's result."""

    type: Literal["subagent_finished"] = "subagent_finished"
    child_id: str
    parent_id: str
    call_id: str
    ok: bool
    reason: CompletionReason
    report: str
    tokens: int = 0
    cost: float | None = None
    started: float = 0.0  # wall-clock start and end (time.time())
    ended: float = 0.0


class GoalRound(_Event):
    """A round of a goal (`run --until CMD`, the app's `/goal`): the check ran after the round."""

    type: Literal["goal_round"] = "goal_round"
    round: int
    max_rounds: int
    check: str
    passed: bool
    exit_code: int | None = None
    output: str = ""


class Complete(_Event):
    type: Literal["complete"] = "complete"
    success: bool
    iterations: int
    final_response: str
    completion_reason: CompletionReason


class WarningEvent(_Event):
    """Something the user should know that does not stop anything (e.g. settings left out)."""

    type: Literal["warning"] = "warning"
    message: str


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    message: str
    recoverable: bool = True
    # Only another model, provider or key fixes it (unknown provider or model, no key):
    # `coder-tui run` exits 2 and the app opens its setup screen.
    configuration: bool = False


# -- the structured workflow (agent/planning): field names are wire format ------------------------
class ClassificationEvent(_Event):
    """The intent router's verdict on a user message."""

    type: Literal["classification"] = "classification"
    task_type: TaskType


class PlanStepInfo(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    title: str
    description: str = ""
    status: StepStatus = "pending"


class PlanInfo(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    refined_goal: str
    steps: list[PlanStepInfo]


class PlanCreated(_Event):
    """A plan exists (new, edited, or replanned: finished steps keep their status)."""

    type: Literal["plan_created"] = "plan_created"
    plan: PlanInfo


class PlanDecisionRequired(_Event):
    """The run waits for the user: `review` a new plan, or decide on a `failed_step`."""

    type: Literal["plan_decision_required"] = "plan_decision_required"
    kind: Literal["review", "failed_step"]
    plan: PlanInfo
    step_id: str | None = None
    error: str | None = None


class StepStart(_Event):
    type: Literal["step_start"] = "step_start"
    step_id: str
    title: str


class AgentAction(_Event):
    """A tool trace inside a plan step."""

    type: Literal["agent_action"] = "agent_action"
    step_id: str
    tool: str
    status: Literal["running", "success", "error"]


class StepComplete(_Event):
    type: Literal["step_complete"] = "step_complete"
    step_id: str
    status: Literal["done", "failed", "skipped"]
    summary: str = ""


# -- live OCT rooms (`coder-tui room`, the room pane) ------------------------------------------
RoomPhase = Literal["starting", "connecting", "logging_in", "waiting_for_host", "joined", "reconnecting", "closed"]


class RoomState(_Event):
    """The room connection's phase changed (or its message: a login URL, a join status)."""

    type: Literal["room_state"] = "room_state"
    phase: RoomPhase
    message: str = ""
    room_id: str
    server: str
    peer_id: str | None = None
    host: str | None = None
    followed: str | None = None
    readonly: bool = False
    login_url: str | None = None


class PeerJoined(_Event):
    type: Literal["peer_joined"] = "peer_joined"
    peer_id: str
    name: str
    email: str | None = None
    colour: str = ""


class PeerLeft(_Event):
    type: Literal["peer_left"] = "peer_left"
    peer_id: str
    name: str


class TriggerEvent(_Event):
    """Someone asked the agent something: an `@name` line in a document, a chat message, or a
    prompt typed into coder-tui itself while it is in the room."""

    type: Literal["trigger"] = "trigger"
    source: Literal["document", "chat", "local"]  # local: typed into coder-tui itself
    prompt: str
    path: str | None = None
    line: int | None = None  # 1-based, when the trigger is a document line
    by: str = ""  # the name of whoever asked, when known
    queued: int = 0  # triggers waiting behind this one
    document: str = ""  # the (windowed, numbered) document given to the model


class RoomClosed(_Event):
    type: Literal["room_closed"] = "room_closed"
    reason: str


class MapProgress(_Event):
    """The codebase map's build: a file parsed or summarised (`coder-tui map`, the agent's map tool)."""

    type: Literal["map_progress"] = "map_progress"
    phase: Literal["parse", "summarise"]
    done: int
    total: int
    path: str


class MapPlan(_Event):
    """What summarising the map's pending files will cost, before it starts."""

    type: Literal["map_plan"] = "map_plan"
    summaries: int
    prompt_tokens: int
    completion_tokens: int
    estimated_cost: float | None
    text: str


class ExploreStep(_Event):
    type: Literal["explore_step"] = "explore_step"
    kind: str  # "folder" or "summarise"
    path: str
    text: str


class ExploreStepFailed(_Event):
    """A file exploration could not summarise (set aside; the next steps go on)."""

    type: Literal["explore_error"] = "explore_error"
    path: str
    text: str


class ExploreIdle(_Event):
    type: Literal["explore_idle"] = "explore_idle"
    text: str


class ExploreWait(_Event):
    type: Literal["explore_wait"] = "explore_wait"
    seconds: int
    text: str


class ExploreProgress(_Event):
    """A step of exploration done: the explorer's status (the fields of `explore status`), then how far it is."""

    type: Literal["explore_progress"] = "explore_progress"
    files: int
    summarised: int
    pending: int
    folders: int
    last: Any = None
    running_pid: int | None = None
    phase: Literal["explore"] = "explore"
    done: int
    total: int
    path: str


Event = Annotated[
    Union[
        RunStarted,
        StepStarted,
        TextDelta,
        ReasoningDelta,
        ToolCallEvent,
        ToolResultEvent,
        ApprovalRequired,
        ApprovalResolved,
        FileChanged,
        PlanUpdated,
        CheckpointEvent,
        Usage,
        Retrying,
        Published,
        Compacted,
        ModelFallback,
        McpServerState,
        FileReady,
        ScratchpadUpdated,
        Complete,
        ErrorEvent,
        WarningEvent,
        RoomState,
        PeerJoined,
        PeerLeft,
        TriggerEvent,
        RoomClosed,
        ClassificationEvent,
        PlanCreated,
        PlanDecisionRequired,
        StepStart,
        AgentAction,
        StepComplete,
        MapProgress,
        MapPlan,
        ExploreStep,
        ExploreStepFailed,
        ExploreIdle,
        ExploreWait,
        ExploreProgress,
        SubagentStarted,
        SubagentUpdate,
        SubagentFinished,
        GoalRound,
    ],
    Field(discriminator="type"),
]

@functools.cache
def _adapter() -> TypeAdapter[Event]:
    """Built on first use: its schema covers every event (tens of milliseconds at import otherwise)."""
    return TypeAdapter(Event)


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    """Parse one event from its JSON text or dict form."""
    if isinstance(data, dict):
        return _adapter().validate_python(data)
    return _adapter().validate_json(data)
