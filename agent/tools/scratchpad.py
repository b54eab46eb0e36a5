"""The agent's own notes (seed 001's `scratchpad` and `observations`): kept per session, carried
in the system prompt of every request, shown in the app's side panel.

`scratchpad_write` replaces (or appends to) the planning notes; `note_observation` adds one fact
learned about the codebase. Neither touches the workspace, so neither asks for approval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError

MAX_NOTES = 8000  # characters of scratchpad
MAX_OBSERVATIONS = 50  # kept; the prompt carries the newest PROMPT_OBSERVATIONS
PROMPT_OBSERVATIONS = 20


@dataclass
class Scratchpad:
    text: str = ""
    observations: list[str] = field(default_factory=list)
    on_change: Callable[[Scratchpad], None] = lambda pad: None

    def dump(self) -> dict[str, Any]:
        return {"text": self.text, "observations": list(self.observations)}

    def load(self, data: Any) -> None:
        if isinstance(data, dict):
            self.text = str(data.get("text") or "")[:MAX_NOTES]
            self.observations = [str(o) for o in data.get("observations") or []][-MAX_OBSERVATIONS:]

    def prompt_section(self) -> str:
        if not self.text and not self.observations:
            return ""
        parts = ["\n## Your scratchpad (your own notes, kept across turns; scratchpad_write changes them)"]
        if self.text:
            parts.append(self.text)
        if self.observations:
            parts.append("Observations about the codebase:")
            parts += [f"- {o}" for o in self.observations[-PROMPT_OBSERVATIONS:]]
        return "\n".join(parts) + "\n"


def pad_of(ctx: ToolContext) -> Scratchpad:
    pad = ctx.extras.get("scratchpad")
    if not isinstance(pad, Scratchpad):
        pad = ctx.extras["scratchpad"] = Scratchpad()
    return pad


class ScratchpadWriteArgs(ToolArgs):
    text: str = Field(description="Your notes: the plan, what you are unsure of, what to do next.")
    append: bool = Field(default=False, description="Add to the notes instead of replacing them.")


class ScratchpadWrite(Tool):
    name = "scratchpad_write"
    description = ("Keep your own planning notes for this session. They are shown to you at the start of "
                   "every turn, so write what you will need later; they replace the previous notes unless "
                   "append is true.")
    Args = ScratchpadWriteArgs
    examples = ({"text": "Goal: faster startup. Next: profile imports in cli.py."},)

    async def run(self, args: ScratchpadWriteArgs, ctx: ToolContext) -> str:
        pad = pad_of(ctx)
        text = f"{pad.text}\n{args.text}".strip() if args.append else args.text.strip()
        if len(text) > MAX_NOTES:
            raise ToolError(f"the notes would be {len(text):,} characters; keep them under {MAX_NOTES:,} "
                            "(replace them with a shorter version)")
        pad.text = text
        pad.on_change(pad)
        return f"Scratchpad saved ({len(text):,} characters)."


class NoteObservationArgs(ToolArgs):
    note: str = Field(min_length=1, max_length=500, description="One fact learned about the codebase.")


class NoteObservation(Tool):
    name = "note_observation"
    description = ("Record one fact learned about the codebase (where something lives, how it works, a "
                   "convention) so that later turns know it without reading again.")
    Args = NoteObservationArgs
    examples = ({"note": "Config is loaded in agent/config.py; flags beat environment beat files."},)

    async def run(self, args: NoteObservationArgs, ctx: ToolContext) -> str:
        pad = pad_of(ctx)
        pad.observations = [*pad.observations, args.note.strip()][-MAX_OBSERVATIONS:]
        pad.on_change(pad)
        return f"Noted ({len(pad.observations)} observations kept)."


SCRATCHPAD_TOOLS: list[type[Tool]] = [ScratchpadWrite, NoteObservation]
