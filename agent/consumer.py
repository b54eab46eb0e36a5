"""The one typed way to consume the event stream: a handler method per event class.

Every front end (the app's presenter, the printers of `coder-tui run` and `coder-tui room`, the
replay of a resumed session, the SSE and ACP servers) subclasses `EventHandler` and overrides the
methods of the events it cares about; `handle(event)` calls the one that belongs to the event's
class. Each method is annotated with its class, so the type checker rejects an override that
takes the wrong event, and `HANDLERS` (event class -> method name) is built from those annotations at import time: a new event
class without its method fails on import, not silently at run time.
"""

from __future__ import annotations

import typing
from agent import events as ev


class EventHandler:
    """Override `on_<type>` for the events a consumer shows; the rest go to `unhandled`."""

    def handle(self, event: ev.Event) -> None:
        getattr(self, HANDLERS[type(event)])(event)

    def unhandled(self, event: ev.Event) -> None:
        """Called for every event whose method is not overridden; nothing by default."""

    def on_run_started(self, event: ev.RunStarted) -> None:
        self.unhandled(event)

    def on_step_started(self, event: ev.StepStarted) -> None:
        self.unhandled(event)

    def on_text_delta(self, event: ev.TextDelta) -> None:
        self.unhandled(event)

    def on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        self.unhandled(event)

    def on_tool_call(self, event: ev.ToolCallEvent) -> None:
        self.unhandled(event)

    def on_tool_result(self, event: ev.ToolResultEvent) -> None:
        self.unhandled(event)

    def on_approval_required(self, event: ev.ApprovalRequired) -> None:
        self.unhandled(event)

    def on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        self.unhandled(event)

    def on_file_changed(self, event: ev.FileChanged) -> None:
        self.unhandled(event)

    def on_plan_updated(self, event: ev.PlanUpdated) -> None:
        self.unhandled(event)

    def on_checkpoint(self, event: ev.CheckpointEvent) -> None:
        self.unhandled(event)

    def on_usage(self, event: ev.Usage) -> None:
        self.unhandled(event)

    def on_retrying(self, event: ev.Retrying) -> None:
        self.unhandled(event)

    def on_published(self, event: ev.Published) -> None:
        self.unhandled(event)

    def on_compacted(self, event: ev.Compacted) -> None:
        self.unhandled(event)

    def on_model_fallback(self, event: ev.ModelFallback) -> None:
        self.unhandled(event)

    def on_mcp_server(self, event: ev.McpServerState) -> None:
        self.unhandled(event)

    def on_scratchpad(self, event: ev.ScratchpadUpdated) -> None:
        self.unhandled(event)

    def on_file_ready(self, event: ev.FileReady) -> None:
        self.unhandled(event)

    def on_complete(self, event: ev.Complete) -> None:
        self.unhandled(event)

    def on_error(self, event: ev.ErrorEvent) -> None:
        self.unhandled(event)

    def on_warning(self, event: ev.WarningEvent) -> None:
        self.unhandled(event)

    def on_room_state(self, event: ev.RoomState) -> None:
        self.unhandled(event)

    def on_peer_joined(self, event: ev.PeerJoined) -> None:
        self.unhandled(event)

    def on_peer_left(self, event: ev.PeerLeft) -> None:
        self.unhandled(event)

    def on_trigger(self, event: ev.TriggerEvent) -> None:
        self.unhandled(event)

    def on_room_closed(self, event: ev.RoomClosed) -> None:
        self.unhandled(event)

    def on_classification(self, event: ev.ClassificationEvent) -> None:
        self.unhandled(event)

    def on_plan_created(self, event: ev.PlanCreated) -> None:
        self.unhandled(event)

    def on_plan_decision_required(self, event: ev.PlanDecisionRequired) -> None:
        self.unhandled(event)

    def on_step_start(self, event: ev.StepStart) -> None:
        self.unhandled(event)

    def on_agent_action(self, event: ev.AgentAction) -> None:
        self.unhandled(event)

    def on_step_complete(self, event: ev.StepComplete) -> None:
        self.unhandled(event)

    def on_map_progress(self, event: ev.MapProgress) -> None:
        self.unhandled(event)

    def on_map_plan(self, event: ev.MapPlan) -> None:
        self.unhandled(event)

    def on_explore_step(self, event: ev.ExploreStep) -> None:
        self.unhandled(event)

    def on_explore_error(self, event: ev.ExploreStepFailed) -> None:
        self.unhandled(event)

    def on_explore_idle(self, event: ev.ExploreIdle) -> None:
        self.unhandled(event)

    def on_explore_wait(self, event: ev.ExploreWait) -> None:
        self.unhandled(event)

    def on_explore_progress(self, event: ev.ExploreProgress) -> None:
        self.unhandled(event)

    def on_subagent_started(self, event: ev.SubagentStarted) -> None:
        self.unhandled(event)

    def on_subagent_update(self, event: ev.SubagentUpdate) -> None:
        self.unhandled(event)

    def on_subagent_finished(self, event: ev.SubagentFinished) -> None:
        self.unhandled(event)

    def on_goal_round(self, event: ev.GoalRound) -> None:
        self.unhandled(event)


def _handlers() -> dict[type, str]:
    """Event class -> the name of its method, read from the methods' annotations."""
    table: dict[type, str] = {}
    for name, method in vars(EventHandler).items():
        if name.startswith("on_"):
            table[typing.get_type_hints(method)["event"]] = name
    missing = set(typing.get_args(typing.get_args(ev.Event)[0])) - set(table)
    if missing:  # pragma: no cover - a new event class without its handler method
        raise TypeError(f"EventHandler has no method for {sorted(c.__name__ for c in missing)}")
    return table


HANDLERS = _handlers()
