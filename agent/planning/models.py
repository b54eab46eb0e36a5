"""The plan and the router's answer, as validated data (the planner's `submit_plan` arguments,
the small model's classification, the plan kept in the session record)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent.events import PlanInfo, PlanStepInfo, StepStatus, TaskType

Workflow = Literal["auto", "direct", "structured"]
WORKFLOWS: tuple[str, ...] = ("auto", "direct", "structured")
MAX_STEPS = 20


class Classification(BaseModel):
    """The router's answer: what the message is, and whether it needs a plan of several steps."""

    model_config = ConfigDict(extra="ignore")

    task_type: TaskType
    needs_plan: bool = False


class StepDraft(BaseModel):
    """One step as the planner (or the user editing a plan) writes it."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200, description="A short imperative title.")
    description: str = Field(default="", max_length=4000,
                             description="What to do in this step and how to know it is done.")

    @field_validator("title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a step title may not be blank")
        return value.strip()


class PlanDraft(BaseModel):
    """The arguments of `submit_plan`."""

    model_config = ConfigDict(extra="forbid")

    refined_goal: str = Field(min_length=1, max_length=2000,
                              description="The task restated precisely: what done looks like.")
    steps: list[StepDraft] = Field(min_length=1, max_length=MAX_STEPS,
                                   description="The steps in order; end complex tasks with a 'Final report' step.")


class Step(BaseModel):
    id: str
    title: str
    description: str = ""
    status: StepStatus = "pending"
    summary: str = ""

    @property
    def finished(self) -> bool:
        return self.status in ("done", "skipped")


class Plan(BaseModel):
    refined_goal: str
    steps: list[Step]
    next_id: int = 1  # ids stay unique when steps are added or replanned

    @classmethod
    def from_draft(cls, draft: PlanDraft, kept: list[Step] | None = None, next_id: int = 1) -> Plan:
        plan = cls(refined_goal=draft.refined_goal, steps=list(kept or []), next_id=next_id)
        for item in draft.steps:
            plan.steps.append(Step(id=str(plan.next_id), title=item.title, description=item.description))
            plan.next_id += 1
        return plan

    def current(self) -> Step | None:
        """The first step not finished yet (a failed or interrupted one runs again)."""
        return next((s for s in self.steps if not s.finished), None)

    def done_steps(self) -> list[Step]:
        return [s for s in self.steps if s.finished]

    def info(self) -> PlanInfo:
        return PlanInfo(refined_goal=self.refined_goal, steps=[
            PlanStepInfo(id=s.id, title=s.title, description=s.description, status=s.status, summary=s.summary)
            for s in self.steps])

    def outline(self, current: str | None = None) -> str:
        """The plan as the models read it."""
        lines = []
        for number, step in enumerate(self.steps, 1):
            mark = "current" if step.id == current else step.status
            lines.append(f"{number}. [{mark}] {step.title}" + (f" — {step.description}" if step.description else ""))
        return "\n".join(lines)

    def markdown(self) -> str:
        """The plan as a user reads it (plan mode's answer)."""
        steps = "\n".join(f"{n}. **{s.title}**" + (f" — {s.description}" if s.description else "")
                          for n, s in enumerate(self.steps, 1))
        return f"**Goal:** {self.refined_goal}\n\n{steps}"
