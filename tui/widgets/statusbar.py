"""The status bar: mode badge, allowances, workspace, model, tokens and cost, and what the agent
is doing.

One widget drawing its segments (five widgets would cost the first frame more than they are
worth); colours come from the theme through component classes. Clicking the badge cycles the mode;
clicking the allowances (the tools "allow for this session" let run without asking, shown in ask
mode) lists them with how to revoke them.
"""

from __future__ import annotations

from rich.text import Text
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

from tui.widgets.spinner import SPINNER

MODES = ("plan", "ask", "allow")
# Until litellm is loaded (a few seconds after start) no prompt can be answered: never "idle" then.
LOADING_MODELS = "loading model support…"
BUSY_STATES = ("loading", LOADING_MODELS, "thinking", "writing", "running", "waiting for approval", "waiting", "stopping",
               "leaving", "closing")


def compact_count(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 100_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


class StatusBar(Widget):
    COMPONENT_CLASSES = {
        "statusbar--plan", "statusbar--ask", "statusbar--allow", "statusbar--workspace", "statusbar--dim",
        "statusbar--busy", "statusbar--approval", "statusbar--allowed",
    }

    class ModeClicked(Message):
        pass

    class AllowancesClicked(Message):
        pass

    def __init__(self, mode: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.mode = mode
        self.workspace = ""
        self.model = ""
        self.profile = ""  # shown when it is not the default profile
        self.reasoning = ""  # the reasoning effort, shown when it is not off
        self.usage = ""
        self.state = "loading"
        self.detail = ""
        self.frame = 0
        self.allowances: list[str] = []  # tools allowed for this session, in the order allowed
        self.goal = ""  # a goal's rounds and its last check (`/goal`): "goal 2/10 ✗"

    # -- what it shows --------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self.refresh()

    def set_allowances(self, tools: list[str]) -> None:
        self.allowances = list(tools)
        self.refresh()

    def set_workspace(self, label: str) -> None:
        self.workspace = label
        self.refresh()

    def set_model(self, model: str) -> None:
        self.model = model or "no model"
        self.refresh()

    def set_reasoning(self, level: str) -> None:
        self.reasoning = "" if level == "off" else level
        self.refresh()

    def set_profile(self, name: str) -> None:
        self.profile = "" if name == "coder" else name
        self.refresh()

    def set_usage(self, prompt_tokens: int, completion_tokens: int, cost: float | None, cached: int = 0,
                  reasoning: int = 0) -> None:
        """Session totals; `cached` prompt tokens were read from the provider's prompt cache, and
        `reasoning` completion tokens were the model's reasoning."""
        reused = f" ({compact_count(cached)} cached)" if cached else ""
        thought = f" ({compact_count(reasoning)} reasoning)" if reasoning else ""
        text = f"{compact_count(prompt_tokens)} in{reused} · {compact_count(completion_tokens)} out{thought}"
        if cost is not None:
            text += f" · ${cost:.3f}" if cost < 10 else f" · ${cost:.2f}"
        self.usage = text if prompt_tokens or completion_tokens else ""
        self.refresh()

    def set_goal(self, round_: int, max_rounds: int, passed: bool | None) -> None:
        """A goal's progress: the round and the last check's verdict (None: not checked yet)."""
        mark = "" if passed is None else (" ✓" if passed else " ✗")
        self.goal = f"goal {round_}/{max_rounds}{mark}" if max_rounds else ""
        self.refresh()

    def set_state(self, state: str, detail: str = "") -> None:
        self.state, self.detail = state, detail
        self.refresh()

    @property
    def busy(self) -> bool:
        return self.state in BUSY_STATES

    def tick(self) -> None:
        self.frame += 1
        if self.busy:
            self.refresh()

    # -- drawing --------------------------------------------------------------------------
    def badge(self) -> Text:
        return Text(f" {self.mode.upper()} ", style=self.get_component_rich_style(f"statusbar--{self.mode}"))

    def allowed(self) -> Text:
        """After the badge in ask mode: what runs without asking all the same."""
        if self.mode != "ask" or not self.allowances:
            return Text()
        names = self.allowances[0] if len(self.allowances) == 1 else f"{len(self.allowances)} tools"
        return Text(f" ✓ {names} allowed ", style=self.get_component_rich_style("statusbar--allowed"))

    def _right(self) -> Text:
        dim = self.get_component_rich_style("statusbar--dim")
        right = Text()
        for part in (self.goal, self.profile and f"profile {self.profile}", self.model,
                     self.reasoning and f"reasoning {self.reasoning}", self.usage):
            if part:
                right.append(f"{part}  ", style=dim)
        icon = SPINNER[self.frame % len(SPINNER)] if self.busy else "●"
        kind = "approval" if self.state == "waiting for approval" else "busy" if self.busy else "dim"
        right.append(f"{icon} {self.state}", style=self.get_component_rich_style(f"statusbar--{kind}"))
        if self.detail:
            right.append(f" {self.detail}", style=dim)
        return right

    def render(self) -> Text:
        badge, right = self.badge() + self.allowed(), self._right()
        room = self.size.width - badge.cell_len - right.cell_len - 3
        workspace = self.workspace
        if len(workspace) > room:  # keep the end of a path: the folder's own name matters most
            workspace = "…" + workspace[-max(room - 1, 0):] if room > 1 else ""
        middle = Text(f" {workspace}", style=self.get_component_rich_style("statusbar--workspace"))
        gap = max(1, self.size.width - badge.cell_len - middle.cell_len - right.cell_len - 1)
        return Text.assemble(badge, middle, " " * gap, right, " ")

    def on_click(self, event: Click) -> None:
        badge = self.badge().cell_len
        if event.x < badge:
            self.post_message(self.ModeClicked())
        elif event.x < badge + self.allowed().cell_len:
            self.post_message(self.AllowancesClicked())
