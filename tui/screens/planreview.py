"""The plan review (ask mode): the plan before anything runs, editable, and the choice after a
step failed twice. Answers are agent/planning/review.py's PlanDecision.

The steps are edited as text, one step a line, `title — description`: reword a line, delete it,
move it (reorder) or add one. Run keeps the edits; feedback asks the planner for a new plan.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from agent.textsafe import line as one_line
from agent.textsafe import visible

if TYPE_CHECKING:
    from agent.session.core import AgentSession

SEPARATOR = " — "
SPLIT_RE = re.compile(r"\s+[—-]\s+")  # typed as " - " too: an em dash is hard to type


def steps_text(plan: Any) -> str:
    return "\n".join(one_line(s.title) + (f"{SEPARATOR}{one_line(s.description)}" if s.description else "")
                     for s in plan.steps)


def parse_steps(text: str) -> list[dict[str, str]]:
    steps = []
    for line in text.splitlines():
        title, *rest = SPLIT_RE.split(line.strip(), maxsplit=1)
        description = rest[0] if rest else ""
        if title.strip():
            steps.append({"title": title.strip(), "description": description.strip()})
    return steps


class PlanReviewScreen(ModalScreen[Any]):
    DEFAULT_CSS = """
    PlanReviewScreen { align: center middle; }
    PlanReviewScreen > Vertical {
        width: 100; max-width: 95%; height: auto; max-height: 90%; padding: 1 2;
        border: round $primary; background: $panel;
    }
    PlanReviewScreen .goal { margin-bottom: 1; text-style: bold; }
    PlanReviewScreen .hint { color: $text-muted; }
    PlanReviewScreen TextArea { height: 12; }
    PlanReviewScreen Input { margin-top: 1; }
    PlanReviewScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    PlanReviewScreen Button { margin-left: 2; }
    """
    # Typing goes to the feedback from the first key; running the plan takes its own key (Ctrl+R
    # or the button), never a stray Enter.
    AUTO_FOCUS = "#feedback"
    BINDINGS = [
        Binding("ctrl+r", "run", "Run the plan", id="plan.run"),
        Binding("escape", "stop", "Stop", id="plan.stop"),
    ]

    def __init__(self, plan: Any) -> None:
        super().__init__()
        self.plan = plan
        self.original = steps_text(plan)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Plan: {visible(self.plan.refined_goal)}", classes="goal", markup=False)
            yield Static("One step a line, title — description (or title - description): reword, delete, reorder "
                         "or add lines.",
                         classes="hint")
            yield TextArea(self.original, id="steps")
            yield Input(placeholder="Or feedback for a new plan (Enter sends it)", id="feedback")
            with Horizontal():
                yield Button("Stop (esc)", id="stop")
                yield Button("Run plan (ctrl+r)", id="run", variant="primary")

    def action_run(self) -> None:
        from agent.planning.review import PlanDecision

        text = self.query_one("#steps", TextArea).text
        steps = parse_steps(text)
        if not steps:
            self.notify("The plan needs at least one step (or Esc to stop).", severity="warning")
            return
        if text.strip() == self.original.strip():
            self.dismiss(PlanDecision(decision="approve"))
        else:
            self.dismiss(PlanDecision.model_validate({"decision": "edit", "steps": steps}))

    def action_stop(self) -> None:
        from agent.planning.review import PlanDecision

        self.dismiss(PlanDecision(decision="stop"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from agent.planning.review import PlanDecision

        if event.value.strip():
            self.dismiss(PlanDecision(decision="feedback", feedback=event.value.strip()))
        else:
            self.notify("Type feedback for a new plan, or press Ctrl+R to run this one.", timeout=4)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_run() if event.button.id == "run" else self.action_stop()


class FailedStepScreen(ModalScreen[Any]):
    DEFAULT_CSS = """
    FailedStepScreen { align: center middle; }
    FailedStepScreen > Vertical {
        width: 80; max-width: 95%; height: auto; padding: 1 2; border: round $error; background: $panel;
    }
    FailedStepScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    FailedStepScreen Button { margin-left: 2; }
    """
    BINDINGS = [Binding("r", "choose('retry')", "Retry", id="step.retry"),
                Binding("k", "choose('skip')", "Skip", id="step.skip"),
                Binding("s,escape", "choose('stop')", "Stop", id="step.stop")]

    def __init__(self, title: str, error: str) -> None:
        super().__init__()
        self.title_text, self.error = title, error

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Step “{one_line(self.title_text)}” failed twice:\n{visible(self.error[-600:])}",
                         markup=False)
            with Horizontal():
                yield Button("Stop (s)", id="stop")
                yield Button("Skip (k)", id="skip")
                yield Button("Retry (r)", id="retry", variant="primary")

    def action_choose(self, choice: str) -> None:
        from agent.planning.review import PlanDecision

        self.dismiss(PlanDecision(decision=choice))  # type: ignore[arg-type]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_choose(event.button.id or "stop")


class TuiPlanReviewer:
    """Answers the workflow's plan decisions with the screens above (the run awaits them)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.session: AgentSession | None = None

    def attach(self, session: AgentSession) -> None:
        """The session whose plans this reviewer shows (open_session binds it)."""
        self.session = session

    async def decide(self, kind: str) -> Any:
        from agent.planning.models import Plan

        assert self.session is not None, "open_session attaches the reviewer to its session"
        plan = Plan.model_validate(self.session.state["plan"])
        if kind == "review":
            screen: ModalScreen[Any] = PlanReviewScreen(plan)
        else:
            step = next((s for s in plan.steps if s.status == "failed"), plan.current())
            screen = FailedStepScreen(step.title if step else "?", step.summary if step else "")
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.app.bell()
        self.app.push_screen(screen, callback=lambda result: None if answer.done() else answer.set_result(result))
        return await answer
