"""The planner (the architect): its own conversation with read-only tools, ended by `submit_plan`.

Its model is the session's model chain (a fallback takes over as in a run) and it spends from the
turn's budget: once that is spent, the next request is not made (BudgetExceeded).

The plan is validated by pydantic; an invalid plan (or an answer without one) is sent back once
with the error, a second failure ends planning with that error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agent.events import Retrying
from agent.executor import Executor
from agent.llm import LLM, ModelReply
from agent.loop import assistant_message
from agent.planning.models import PlanDraft
from agent.tools.base import Tool
from agent.tools.registry import ToolRegistry, parameters_schema

if TYPE_CHECKING:
    from agent.planning.host import PlanHost

SUBMIT = "submit_plan"
MAX_TURNS = 15
PROMPT = """You are the planner (the architect) of a coding agent working in a project.
Turn the user's task into a short execution plan. Look at the project first with the read-only
tools when it helps (you cannot change anything), then call `submit_plan` exactly once with:
- refined_goal: the task restated precisely, with what done looks like;
- steps: 2 to 8 steps in order, each with a short imperative title and a description that says
  what to do and how to check it. Each step is carried out separately by an executor that sees
  the goal, the plan and the summaries of the finished steps.
A complex task ends with a step titled "Final report" that summarises the outcome.

Project facts:
{facts}"""


def retry_hook(session: PlanHost) -> Any:
    def on_retry(why: str, attempt: int, delay: float) -> None:
        session.emit(Retrying(why=why, attempt=attempt, delay=round(delay, 2)))
    return on_retry


class PlanningError(Exception):
    """The planner produced no valid plan; the message says why."""


def submit_schema() -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": SUBMIT, "description": "Submit the finished plan. Call it once, when the plan is ready.",
        "parameters": parameters_schema(PlanDraft)}}  # type: ignore[arg-type]


def read_only(tools: list[Tool]) -> ToolRegistry:
    """The tools that only read the project (no todo list: the plan is the planner's output)."""
    return ToolRegistry([t for t in tools if t.kind == "read" and not t.name.startswith("todo_")])


def problem(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"`{where}`: {err['msg']}")
    return "; ".join(parts)


class Planner:
    def __init__(self, session: PlanHost, llm: LLM) -> None:
        self.session = session
        self.llm = session.model_chain(llm)  # the session's fallback models, as a run has them
        self.budget = session.turn_budget()  # --max-tokens / --max-cost: BudgetExceeded before a request past it
        self.tools = read_only(session.offered_tools())  # the profile's read-only tools
        self.executor = Executor(self.tools, session.ctx, session.gate)
        self.executor.limit = lambda tool: session.executor.limit(tool)  # a room peer's limits apply to its plan's reads

    async def plan(self, task: str) -> PlanDraft:
        facts = "\n".join(f"- {k}: {v}" for k, v in (await self.session.workspace.read_facts()).items())
        messages: list[dict[str, Any]] = [{"role": "system", "content": PROMPT.format(facts=facts)},
                                          {"role": "user", "content": task}]
        schemas = [*self.tools.schemas(self.session.workspace), submit_schema()]
        sent_back = False
        for _turn in range(MAX_TURNS):
            reply = await self._query(messages, schemas)
            messages.append(assistant_message(reply))
            draft, error = await self._handle(reply, messages)
            if draft is not None:
                return draft
            if error is not None:
                if sent_back:
                    raise PlanningError(f"the planner did not produce a valid plan: {error}")
                sent_back = True
                if not reply.tool_calls:
                    messages.append({"role": "user", "content": f"{error} Call {SUBMIT} with the plan now."})
        raise PlanningError(f"the planner did not call {SUBMIT} within {MAX_TURNS} turns")

    async def _query(self, messages: list[dict[str, Any]], schemas: list[dict[str, Any]]) -> ModelReply:
        if self.budget is not None:
            self.budget.check(self.session.totals)
        reply = await self.llm.complete(messages, schemas, lambda _text: None, retry_hook(self.session))
        self.session.emit(self.session.totals.add(reply))
        return reply

    async def _handle(self, reply: ModelReply, messages: list[dict[str, Any]]) -> tuple[PlanDraft | None, str | None]:
        """Runs the reply's calls: (the plan when submitted and valid, the error to send back)."""
        if not reply.tool_calls:
            return None, f"No plan was submitted: answer by calling {SUBMIT}."
        draft: PlanDraft | None = None
        error: str | None = None
        for call in reply.tool_calls:
            if call.name == SUBMIT:
                try:
                    draft = PlanDraft.model_validate_json(call.arguments or "{}")
                    content = "Plan received."
                except ValidationError as exc:
                    error = f"The plan is invalid: {problem(exc)}."
                    content = f"Error: {error} Call {SUBMIT} again with a corrected plan."
            else:
                content = (await self.executor.execute(call)).content
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return draft, error
