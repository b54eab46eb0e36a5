"""What the app's parts need from each other, as types: the session bridge and the boot talk to
the app only through these protocols, and the app to the bridge only through its methods.

Nothing here is imported at run time but `typing`: the first frame stays as light as it was.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from argparse import Namespace

    from textual.screen import Screen

    from agent.approval import ApprovalRequest, Decision
    from agent.config import Config
    from agent.events import Event
    from agent.planning.review import PlanReviewer
    from agent.session.core import AgentSession
    from tui.bridge import AgentBridge

T = TypeVar("T")


class TaskRunner(Protocol):
    """Runs the agent's work beside the UI (a Textual worker: cancelled with the app)."""

    def run_task(self, work: Coroutine[Any, Any, None], name: str, group: str = "default") -> None: ...


class SessionHost(TaskRunner, Protocol):
    """What the session bridge needs from the front end that shows its session."""

    async def ask_approval(self, request: ApprovalRequest) -> Decision:
        """The user's answer to an approval (the loop awaits it)."""
        ...

    def plan_reviewer(self) -> PlanReviewer:
        """The reviewer of the next session's plans (open_session binds it to that session)."""
        ...

    def show_prompt(self, text: str, mentions: list[str]) -> None:
        """A prompt that waited for its turn starts now: show it in the chat."""
        ...

    def agent_idle(self) -> None: ...

    def show_prompt_of(self, text: str, who: str) -> None:
        """A prompt another front end sent (or ours, queued in the session host) starts now."""
        ...

    def notice(self, text: str, kind: str = "info") -> None:
        """A line in the chat (the images a prompt sends)."""
        ...

    def restore_prompt(self, text: str) -> None:
        """A queued prompt a stop dropped before it ran: its text goes back into the input."""
        ...

    def configuration_failed(self, message: str) -> None:
        """The model or provider was rejected (or there is no key): let the user choose again."""
        ...


class BootHost(TaskRunner, Protocol):
    """What loading the agent after the first frame needs from the app (tui/boot.py)."""

    options: Namespace
    mode: str
    config: Config | None
    bridge: AgentBridge

    def notice(self, text: str, kind: str = "info") -> None: ...

    def fatal(self, message: str, fix: str) -> None:
        """The agent cannot start: say why and what to do."""
        ...

    def show_progress(self, label: str | None) -> None: ...

    def github_progress(self, stage: str, done: int, total: int) -> None: ...

    def show_event(self, event: Event) -> None:
        """An event for the chat, the timeline and the status bar."""
        ...

    def refresh_pane(self) -> None: ...

    def send_prompt(self, text: str, mentions: list[str] | None = None) -> None: ...

    def call_later(self, callback: Any, *args: Any, **kwargs: Any) -> bool: ...

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    async def push_screen_wait(self, screen: Screen[T] | str, *, mode: str | None = None) -> T | Any: ...

    def exit(self, result: int | None = None, return_code: int = 0, message: Any = None) -> None: ...

    async def load_user_themes(self) -> None: ...

    def apply_keymap(self, keymap: dict[str, str]) -> None: ...

    def set_mode(self, mode: str) -> None: ...

    def show_model(self, model: str) -> None:
        """The status bar's model (after setup chose another)."""
        ...

    def session_opened(self, session: AgentSession) -> None: ...

    def restart_boot(self) -> None: ...
