"""The body of `POST /api/chat` (seed 002) and of `POST /api/approvals/{id}`, validated, and the
prompt the agent gets from it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.config import first_problem
from agent.events import DecisionKind, Mode


class BadRequest(Exception):
    """A request the server refuses with 400 and this message."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")  # editors send more than we read


class ChatMessage(_Body):
    role: Literal["user", "assistant", "system"]
    content: str


class EditorFile(_Body):
    path: str = Field(min_length=1)
    language: str | None = None
    content: str | None = None
    selection: str | None = None


class EditorContext(_Body):
    current_file: EditorFile | None = None
    open_files: list[EditorFile] = Field(default_factory=list)


class ChatRequest(_Body):
    messages: list[ChatMessage]
    context: EditorContext | None = None
    stream: bool = True
    apply: Literal["server", "client"] = "server"
    session_id: str | None = None
    events: Literal["ours", "seed"] = "ours"  # seed 003's shapes with "seed" (also `?events=seed`)
    # seed 003's per-turn settings: the approval mode and the agent (a profile), from this turn on
    mode: Mode | None = Field(default=None, validation_alias=AliasChoices("mode", "edit_mode"))
    agent_id: str | None = Field(default=None, validation_alias=AliasChoices("agent_id", "profile"))

    @field_validator("messages")
    @classmethod
    def _ends_with_user(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        if not messages:
            raise ValueError("is empty: send at least one message")
        if messages[-1].role != "user" or not messages[-1].content.strip():
            raise ValueError("must end with a user message that has content")
        return messages

    @property
    def history(self) -> list[dict[str, str]]:
        """The conversation before the last message (for a new session): user and assistant turns."""
        return [{"role": m.role, "content": m.content} for m in self.messages[:-1] if m.role != "system"]

    def files(self) -> dict[str, str]:
        """The editor's buffers: path -> text, for the files whose content the request carries."""
        context = self.context or EditorContext()
        given = [*context.open_files, *([context.current_file] if context.current_file else [])]
        return {f.path: f.content for f in given if f.content is not None}

    def prompt(self) -> str:
        """The last user message, followed by what the editor shows (file, selection, open files)."""
        text = self.messages[-1].content
        context = self.context
        if context is None or (context.current_file is None and not context.open_files):
            return text
        lines = ["", "", "[Editor context]"]
        current = context.current_file
        if current is not None:
            language = f" ({current.language})" if current.language else ""
            lines.append(f"Current file: {current.path}{language}")
            if current.selection:
                lines += ["Selected text:", "```", current.selection, "```"]
        others = [f.path for f in context.open_files if current is None or f.path != current.path]
        if others:
            lines.append("Open files: " + ", ".join(others))
        return text + "\n".join(lines)


class ApprovalAnswer(_Body):
    decision: DecisionKind
    feedback: str | None = None


def parse(model: type[Any], body: bytes) -> Any:
    """The validated body (BadRequest with the first problem when it is not)."""
    if not body.strip():
        raise BadRequest("the request body is empty; send a JSON object")
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "json_invalid":
            raise BadRequest(f"the request body is not valid JSON ({exc.errors()[0]['msg']})") from None
        where, problem = first_problem(exc, "body")
        raise BadRequest(f"{where}: {problem.removeprefix('Value error, ')}") from None
