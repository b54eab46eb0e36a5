"""AgentSession: a conversation bound to a config, a workspace and an approver.

Front ends open one on a target with `agent.session.open.open_session` (the only assembly), call
`run(prompt)` for each user turn (in a task they own), `answer(approval_id, decision)` for the
approvals their events ask (with a QueueApprover), `stop()` to end a run cleanly, and `close()` at
the end; every event reaches them through their sink. The session records itself to a JSONL file
and is resumed from it by opening with `resume`.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from importlib import resources
from typing import Any

from agent import __version__
from agent.session.setup import AgentSetup
from agent.approval import ApprovalGate, Approver, Decision, QueueApprover
from agent.checkpoints import CheckpointError, CheckpointInfo, Checkpoints
from agent.config import Config
from agent.events import (Complete, DecisionKind, ErrorEvent, FileChanged, Mode, ReasoningDelta, RunStarted, ScratchpadUpdated,
                          TextDelta, TodoItem, WarningEvent, parse_event)
from agent.executor import Executor
from agent.images import Image, content
from agent.llm import LLM
from agent.agents import IterativeRun
from agent.loop import Run, Totals
from agent.modelchain import Budget, ModelChain
from agent.planning.review import QueueReviewer
from agent.profiles import load_profiles
from agent.secrets import contains_secret, redact, register
from agent.session.carry import TaskLog, carried
from agent.session.notes import disk_full, restore_note, stopped_answer
from agent.session.record import SessionData, SessionStore, SessionWriter
from agent.tools import default_tools
from agent.tools.base import Tool, ToolContext
from agent.tools.registry import ToolRegistry
from agent.tools.scratchpad import Scratchpad
from agent.tools.shell import ShellManager
from agent.workspaces.base import Workspace, WorkspaceError

AGENTS_FILE = "AGENTS.md"
Sink = Callable[[Any], None]


def _prompt_file(name: str) -> str:
    return resources.files("agent.prompts").joinpath(name).read_text("utf-8")


def _mode_notes() -> dict[str, str]:
    notes: dict[str, str] = {}
    current = ""
    for line in _prompt_file("modes.md").splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            notes[current] = ""
        elif current:
            notes[current] += line + "\n"
    return {k: v.strip() for k, v in notes.items()}


def _freshener(session: AgentSession) -> Any:
    from agent.knowledge.freshen import SummaryFreshener
    from agent.knowledge.summarize import summary_llm

    return SummaryFreshener(session.workspace, lambda: summary_llm(session.config), session.emit,
                            lambda: session.config.map_tokens > 0)


class AgentSession:
    def __init__(self, config: Config, workspace: Workspace, approver: Approver, sink: Sink,
                 writer: SessionWriter, data: SessionData | None = None,
                 registry: ToolRegistry | None = None) -> None:
        self.config = config
        self.workspace = workspace
        self.sink = sink
        self.writer = writer
        self.registry = registry or ToolRegistry(default_tools())
        self.gate = ApprovalGate(config.mode, approver)
        self.ctx = ToolContext(workspace=workspace, emit=self.emit)
        self.checkpoints = Checkpoints(workspace.root) if workspace.can_checkpoint and workspace.root else None
        self.executor = Executor(self.registry, self.ctx, self.gate,
                                 self._checkpoint if self.checkpoints else None)
        self.executor.touched = self.checkpoints.note_touched if self.checkpoints else None
        from agent.lsp import for_session

        self.lsp = for_session(config, workspace, self.emit)  # language servers, started when first needed
        self.executor.diagnose = self.lsp.diagnose if self.lsp is not None else None
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": ""}]
        self.totals = Totals()
        self._llm: LLM | None = None
        self._reasoning_noted: set[tuple[str, str]] = set()  # (model, level) said to take no effort
        self._task: asyncio.Task[Any] | None = None
        self._stop_requested = False
        self.state: dict[str, Any] = {}  # named values restored from the session file
        self._said: set[str] = set()  # notes on the workspace's instructions, said once a session
        self.instructions: Any = None  # the instructions last loaded (agent/custom/instructions.py Loaded)
        self.resumed = data is not None
        self.workflow = config.workflow  # auto | direct | structured (agent/planning)
        self.plan_reviewer: Any = QueueReviewer()  # a PlanReviewer; front ends answer a QueueReviewer by its methods
        self.plan_running = False
        self.plan_next = False  # the next run plans whatever the workflow (the app's `/plan TASK`)
        self.route_intents = True  # seed 001 intents (agent/planning/intents.py); off for a scheduled task's run
        self.inbox: list[str] = []  # messages sent while a plan runs (see `send`)
        self._budget: Budget | None = None  # the running turn's, shared by its runs (see `new_run`)
        self.restored = data  # what a front end replays on resume (None for a new session)
        self.task_log = TaskLog()  # the user's messages and the files changed, which compaction keeps
        if config.api_key is not None:
            register(config.api_key.get_secret_value())
        if data is not None:
            self._restore(data)
        self.scratchpad = Scratchpad(on_change=self._scratchpad_changed)  # the agent's own notes (seed 001)
        self.scratchpad.load(self.state.get("scratchpad"))
        self.ctx.extras["scratchpad"] = self.scratchpad
        self.ctx.extras["map_freshen"] = _freshener(self)  # stale summaries of files read
        # the agent factory (profile, tools, limits, MCP), given its inputs; the session uses what it built
        self.agent = AgentSetup(config, workspace, self.registry, self.gate, self.messages, self.totals, self.llm,
                                self.emit, writer.compaction)
        self.agent.carry = lambda: carried(self)
        self.executor.permits = self.agent.permits
        self.ctx.extras["extract"] = self.agent.extract

    def _scratchpad_changed(self, pad: Scratchpad) -> None:
        self.state["scratchpad"] = pad.dump()
        self.writer.state("scratchpad", pad.dump())
        self.emit(ScratchpadUpdated(text=pad.text, observations=list(pad.observations)))

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def open(cls, config: Config, workspace: Workspace, approver: Approver, sink: Sink, *,
             resume: str | None = None, store: SessionStore | None = None,
             registry: ToolRegistry | None = None, meta: dict[str, Any] | None = None) -> AgentSession:
        """A new session, or (resume = id, prefix or `last`) the continuation of a recorded one.

        Unfinished: front ends and drivers open sessions with `agent.session.open.open_session`,
        which adds the sandbox policy, the plan reviewer and the approver's and target's binding."""
        store = store or SessionStore()
        # A bad profile (name or file) fails here, before a session file is written.
        load_profiles(workspace.root, trusted=config.workspace_trusted).get(config.profile)
        if resume:
            path = store.resolve(resume, workspace=workspace.label)
            writer, data = store.reopen(path)
            return cls(config, workspace, approver, sink, writer, data, registry)
        root = str(workspace.root) if workspace.root else None
        writer = store.create({"workspace": workspace.label, "workspace_kind": workspace.kind, "root": root,
                               "model": config.model, "mode": config.mode, "version": __version__,
                               **(meta or {})})
        return cls(config, workspace, approver, sink, writer, None, registry)

    def _restore(self, data: SessionData) -> None:
        self.messages.extend(m for m in data.messages if m.get("role") != "system")
        self.ctx.todos[:] = [TodoItem.model_validate(t) for t in data.todos]
        for event in data.events:
            if event.get("type") == "usage":
                self.totals.restore(event)
            self.task_log.note(str(event.get("type")), event)
        self.state = dict(data.state)

    # -- properties -----------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self.writer.session_id

    @property
    def mode(self) -> Mode:
        return self.gate.mode

    @mode.setter
    def mode(self, value: Mode) -> None:
        self.gate.mode = value

    @property
    def model(self) -> str | None:
        return self.config.model

    @model.setter
    def model(self, value: str) -> None:
        self.config.model = value
        self._llm = None

    @property
    def reasoning(self) -> str:
        return self.config.reasoning

    @reasoning.setter
    def reasoning(self, level: str) -> None:
        """The reasoning effort from the next request on (agent/llm/reasoning.py LEVELS)."""
        self.config.reasoning = level  # type: ignore[assignment]  # the caller checked the level
        self._llm = None

    def reconfigure(self, config: Config) -> None:
        """Use another model, server or key from the next request on (mode and history stay)."""
        if config.api_key is not None:
            register(config.api_key.get_secret_value())
        self.config = self.agent.config = config
        self._llm = None

    @property
    def running(self) -> bool:
        return self._task is not None

    @property
    def todos(self) -> list[TodoItem]:
        return list(self.ctx.todos)

    def emit(self, event: Any) -> None:
        if isinstance(event, (TextDelta, ReasoningDelta)):  # streamed text is not recorded (its message is)
            if contains_secret(event.text):
                event = parse_event(redact(event.model_dump_json()))
            self.sink(event)
            return
        # serialised once, for the check, the mask and the session file (in the file's JSON style)
        dumped = json.dumps(event.model_dump(mode="json"), ensure_ascii=False)
        if contains_secret(dumped):
            dumped = redact(dumped)
            event = parse_event(dumped)
        self.writer.event(event, dumped)
        if isinstance(event, (RunStarted, FileChanged)):
            self.task_log.note(event.type, event.model_dump())
        self.sink(event)

    def record_state(self, key: str, value: Any) -> None:
        """Persist a named value in the session file (restored on resume as `state`)."""
        self.writer.state(key, value)

    # -- running --------------------------------------------------------------------------
    def llm(self) -> LLM:
        if self._llm is None:
            c = self.config
            self._llm = LLM(c.require_model(), c.api_base, c.api_key.get_secret_value() if c.api_key else None,
                            c.timeout, c.max_retries, c.retry_base_delay, c.key_variable(), c.reasoning,
                            c.model_path)
        return self._llm

    async def run(self, prompt: str, images: list[Image] | None = None) -> Complete:
        """One user turn. Cancelling the calling task through `stop()` ends it as `stopped`.

        Under the `auto` and `structured` workflows the turn is routed and may become a plan
        (agent/planning); an empty prompt then continues the session's unfinished plan. A turn with
        `images` is a direct one; ImageError (before anything runs) when the model takes no images.
        """
        if self._task is not None:
            raise RuntimeError("a run is already active in this session")
        if images:
            self.check_images()
        llm = self.llm()
        self._task, self._stop_requested = asyncio.current_task(), False
        self._budget = self.agent.budget()
        command = self.agent.expand(prompt)  # `/name args`: a custom command (agent/custom/commands.py)
        self.emit(RunStarted(run_id=uuid.uuid4().hex[:12], session_id=self.session_id, mode=self.mode,
                             model=(command and command.model) or llm.model, workspace=self.workspace.label,
                             prompt=prompt))
        prompt = command.prompt if command is not None else prompt
        workflow, self.plan_next = ("structured" if self.plan_next else self.workflow), False
        from agent.permissions import check as hooks
        from agent.planning.intents import steer as steer_intent

        try:
            await self._note_reasoning(llm.model)
            prompt, blocked = await hooks.submit_prompt(self, prompt)  # user_prompt_submit hooks
            if blocked is not None:
                complete = self._blocked(blocked)
            elif self.route_intents and not images and (routed := await steer_intent(self, llm, prompt)) is not None:
                complete = routed  # a scheduled task, exploration or a repository switch (seed 001)
            elif images or (workflow == "direct" and prompt.strip() and self.unfinished_plan is None):
                complete = await self.run_direct(llm, prompt, images)
                if (reason := await hooks.run_stopped(self, complete, False)) is not None:  # a stop hook: go on once
                    complete = await self.run_direct(llm, f"[stop hook] {reason}")
                    await hooks.run_stopped(self, complete, True)
            else:
                from agent.planning.workflow import run_workflow

                self.messages[0] = {"role": "system", "content": await self.system_prompt()}
                complete = await run_workflow(self, llm, prompt, workflow)
        except asyncio.CancelledError:
            if not self._stop_requested or self._task is None:
                raise
            self._task.uncancel()
            complete = self._stopped_early()
        finally:
            self._task, self._budget, self.agent.turn = None, None, None
            self.inbox.clear()
        await self.writer.durable()  # a completed turn's record is on disk before the turn ends
        return complete

    async def _note_reasoning(self, model: str) -> None:
        """Say once when the reasoning asked for cannot reach the model, or waits for the end of the
        tool loop the conversation is in (agent/llm/reasoning.py)."""
        from agent.llm.reasoning import takes_effort, unsupported_note

        key = (model, self.config.reasoning)
        if key[1] == "off":
            return
        self.note_reasoning_held(model)
        if key in self._reasoning_noted:
            return
        self._reasoning_noted.add(key)
        if not takes_effort(model):  # the model's facts, read without litellm
            self.emit(WarningEvent(message=unsupported_note(*key)))

    def note_reasoning_held(self, model: str | None = None) -> bool:
        """Whether the level waits for the end of the tool loop the conversation is in, said once per
        loop (agent/llm/reasoning.py `held`)."""
        from agent.llm.reasoning import held, held_note

        model = model or self.config.model
        key = held(self.messages, model, self.config.reasoning) if model else None
        if key is not None and model and key not in self._reasoning_noted:
            self._reasoning_noted.add(key)
            self.emit(WarningEvent(message=held_note(model, self.config.reasoning)))
        return key is not None

    def check_images(self) -> None:
        """ImageError naming the model when it does not take images (agent/images.py)."""
        from agent.images import ImageError, accepts, refusal

        model = self.config.require_model()
        if not accepts(model, self.config.vision):
            raise ImageError(refusal(model))

    async def run_direct(self, llm: LLM, prompt: str, images: list[Image] | None = None) -> Complete:
        """Today's single loop on the main conversation."""
        user = {"role": "user", "content": content(prompt, images or [])}
        self.messages.append(user)  # before the system prompt: its map ranks the files the prompt names
        self.messages[0] = {"role": "system", "content": await self.system_prompt()}
        self.writer.message(user)
        run: Run | None = None
        try:
            run = await self.new_run(llm, self.messages)
            return await run.execute()
        except asyncio.CancelledError:
            if not self._stop_requested or self._task is None:
                raise
            self._task.uncancel()
            if run is None:
                return self._stopped_early()
            if (answer := stopped_answer(self.messages, "".join(run.partial))) is not None:
                self.messages.append(answer)  # the model learns its answer was cut short
                self.writer.message(answer)
            return run._complete(False, run._with("Stopped by the user."), "stopped")

    def model_chain(self, llm: LLM) -> ModelChain:
        """The session's model on `llm` with its fallback models (a fallback stays for the session):
        what a model loop of the workflow's own (the planner) asks, as a run does."""
        return self.agent.model_chain(llm)

    def turn_budget(self) -> Budget | None:
        """The running turn's token and cost budget (its runs and the planner spend from it)."""
        return self._budget if self._task is not None else self.agent.budget()

    async def new_run(self, llm: LLM, messages: list[dict[str, Any]], *, executor: Executor | None = None,
                      emit: Sink | None = None, record: Callable[[dict[str, Any]], None] | None = None) -> IterativeRun:
        """The one run factory (direct prompts, plan steps): the profile's tools, agent type and step
        limit, the fallback models, compaction, and the turn's budget (every run of a turn spends
        from it). Defaults: the session's executor, events and record."""
        return await self.agent.build_run(llm, self.turn_budget(), executor=executor or self.executor, messages=messages,
                                          emit=emit or self.emit, record=record or self.writer.message,
                                          totals=self.totals)

    def remember(self, message: dict[str, Any]) -> None:
        """A message for the main conversation, recorded (the workflow keeps a plan's exchanges)."""
        self.messages.append(message)
        self.writer.message(message)

    def offered_tools(self) -> list[Tool]:
        """The tools the profile and the mode offer now (MCP tools included)."""
        return self.agent.offered()

    def _blocked(self, reason: str) -> Complete:
        event = Complete(success=False, iterations=0, completion_reason="stopped",
                         final_response=f"A user_prompt_submit hook blocked this prompt: {reason}")
        self.emit(event)
        return event

    def _stopped_early(self) -> Complete:
        event = Complete(success=False, iterations=0, final_response="Stopped by the user.",
                         completion_reason="stopped")
        self.emit(event)
        return event

    def answer(self, approval_id: str, decision: Decision | DecisionKind, feedback: str | None = None) -> bool:
        """Answer the pending approval `approval_id` (from its `approval_required` event); False
        when none with that id waits. Needs an approver that takes answers by id (QueueApprover)."""
        approver = getattr(self.gate.approver, "local", self.gate.approver)  # a room's: the local one
        if not isinstance(approver, QueueApprover):
            raise TypeError(f"{type(approver).__name__} does not take answers by id: open the session "
                            "with a QueueApprover")
        if isinstance(decision, str):
            decision = Decision(decision, feedback)
        return approver.resolve(approval_id, decision)

    @property
    def pending_approvals(self) -> list[str]:
        """The ids of the approvals that wait for an answer (empty unless the approver queues)."""
        approver = getattr(self.gate.approver, "local", self.gate.approver)
        return approver.pending if isinstance(approver, QueueApprover) else []

    def send(self, text: str) -> bool:
        """A message for the plan that is running, routed between its steps (False: none runs)."""
        if not self.plan_running or not text.strip():
            return False
        self.inbox.append(text)
        self.task_log.sent(text)
        return True

    @property
    def unfinished_plan(self) -> Any:
        """The session's plan when it has steps left (a resumed session offers to continue it)."""
        from agent.planning.orchestrator import saved_plan

        return saved_plan(self)

    def small_llm(self) -> LLM:
        """The router's model: the profile's `small_model`, config `small_model`, or the main model."""
        return self.agent.small_llm()

    def stop(self) -> bool:
        """Stop the active run promptly (the model stream and any running tool are cancelled)."""
        if self._task is None or self._task.done():
            return False
        self._stop_requested = True
        self._task.cancel()
        return True

    async def _checkpoint(self, label: str) -> CheckpointInfo | None:
        assert self.checkpoints is not None
        disk_full(self.writer.failure, self.writer.path, any_error=True)  # no change without its record
        try:
            return await self.checkpoints.create(label)
        except (CheckpointError, OSError) as exc:
            disk_full(exc, self.checkpoints.git_dir)
            self.emit(ErrorEvent(message=f"checkpoint failed ({exc}); undo will not cover this step",
                                 recoverable=True))
            return None

    async def undo(self, ref: str | None = None, include_untouched: bool = False) -> tuple[CheckpointInfo, CheckpointInfo]:
        if self.checkpoints is None:
            raise CheckpointError(f"checkpoints are not available for {self.workspace.kind} workspaces")
        # Reads stay remembered: edits based on views from before the restore are refused.
        restored, saved = await self.checkpoints.restore(ref, include_untouched)
        note = restore_note(restored, saved, include_untouched)  # the next request tells the model
        self.messages.append(note)
        self.writer.note(note)
        from agent.session.undo import reopen_in_session

        await reopen_in_session(self, restored)  # plan steps whose work went back are open again
        return restored, saved

    async def system_prompt(self) -> str:
        facts = "\n".join(f"- {k}: {v}" for k, v in (await self.workspace.read_facts()).items())
        facts += f"\n- date: {time.strftime('%Y-%m-%d')}"
        capabilities = "" if self.workspace.can_exec else (
            f"Shell commands are not available: {self.workspace.exec_unavailable_reason}.")
        text = _prompt_file("system.md").format(
            mode=self.mode.upper(), mode_note=_mode_notes()[self.mode], facts=facts,
            capabilities=capabilities,
        )
        agents = await self._agents_md()
        if agents:
            text += f"\n## Project instructions ({AGENTS_FILE})\n{agents}\n"
        tools = ", ".join(tool.name for tool in self.agent.offered())
        text += self.agent.prompt_section({"mode": self.mode, "facts": facts, "tools": tools})
        text += self.scratchpad.prompt_section()
        from agent.knowledge.prompt import map_section
        from agent.knowledge.tasks import prompt_section as tasks_section

        text += await asyncio.to_thread(tasks_section, self.workspace)  # seed 001: what it has scheduled
        from agent.knowledge.store import take_notices

        section = await map_section(self.workspace, self.messages, self.config.map_tokens)
        for note in take_notices():  # a damaged map store was set aside: said once, never a traceback
            self.emit(WarningEvent(message=note))
        return f"{text}\n{section}" if section else text

    async def _agents_md(self) -> str:
        from agent.workspace_input.load import load_instructions

        loaded = await load_instructions(self.workspace)
        self.instructions = loaded  # what was loaded, for the app's /memory
        self.ctx.extras["instruction_files"] = [str(path) for path in loaded.paths]  # protected from edits
        text, notes = loaded.text, loaded.notes
        for note in notes:
            if note not in self._said:  # once per session, not once per request
                self._said.add(note)
                self.emit(WarningEvent(message=note))
        return text

    async def close(self, keep_workspace: bool = False) -> None:
        """End the session; `keep_workspace` leaves the workspace open for a next session."""
        manager = self.ctx.extras.get("shells")
        if isinstance(manager, ShellManager):
            await manager.close_all()
        from agent.tools import sandbox

        await sandbox.close(self.ctx)  # the last walk for repositories commands made, said
        await self.agent.mcp.close()
        if self.lsp is not None:
            await self.lsp.close()
        await self.ctx.extras["map_freshen"].close()
        self.writer.close()
        if not keep_workspace:
            await self.workspace.close()
