"""Quitting a GitHub workspace with edits that are not published: publish them, drop them, or stay.

The edits live in the session's overlay (or the clone's worktree) until they are published, so
quitting without a word would leave them where nobody looks. "Publish" makes the one commit on
the work branch that `/pr` makes (agent/session/github.py), and the exit message says where it is.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui.app import CoderApp

PUBLISH, QUIT = "publish", "quit"
SHOWN_FILES = 6


class UnpublishedScreen(ModalScreen[str | None]):
    CSS_PATH = "unpublished.tcss"
    BINDINGS = [
        Binding("p", "answer('publish')", "Publish and quit", id="unpublished.publish"),
        Binding("q", "answer('quit')", "Quit without publishing", id="unpublished.quit"),
        Binding("escape", "answer(None)", "Cancel", id="unpublished.cancel"),
    ]

    def __init__(self, repository: str, branch: str, files: list[str], session_id: str) -> None:
        super().__init__()
        self.repository, self.branch, self.files, self.session_id = repository, branch, files, session_id

    def compose(self) -> ComposeResult:
        count = f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}"
        shown = self.files[:SHOWN_FILES] + ([f"… and {len(self.files) - SHOWN_FILES} more"]
                                            if len(self.files) > SHOWN_FILES else [])
        with Vertical(id="unpublished-frame"):
            yield Static(f"{count} changed in {self.repository}, not published", id="unpublished-title",
                         markup=False)
            for path in shown:
                yield Static(f"• {path}", classes="unpublished-file", markup=False)
            yield Static(f"Publish them as one commit on {self.branch} before quitting? Otherwise they stay "
                         f"in session {self.session_id} only (coder-tui --github {self.repository} --resume "
                         f"{self.session_id} brings them back).", classes="unpublished-text", markup=False)
            with Horizontal(id="unpublished-actions"):
                yield Button("Cancel (Esc)", id="cancel")
                yield Button("Quit without publishing (q)", id="quit", variant="warning")
                yield Button("Publish and quit (p)", id="publish", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#publish", Button).focus()

    def action_answer(self, value: str | None) -> None:
        self.dismiss(value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id if event.button.id in (PUBLISH, QUIT) else None)


async def settle_unpublished(app: CoderApp) -> str | Literal[False] | None:
    """Before quitting: False to stay; otherwise what to print on exit (None for nothing).

    Nothing is asked unless the workspace is a GitHub one with unpublished changes.
    """
    from agent.github.errors import GitHubError
    from agent.session.github import publish_changes, unpublished

    workspace, session = app.bridge.workspace, app.bridge.session
    link = getattr(workspace, "github", None)  # the API workspace or the clone
    if session is None or workspace is None or link is None:
        return None
    files = await asyncio.to_thread(unpublished, workspace)  # a clone asks git
    if not files:
        return None
    choice = await app.push_screen_wait(UnpublishedScreen(link.remote.full_name, link.publisher.branch, files,
                                                          session.session_id))
    if choice != PUBLISH:
        return None if choice == QUIT else False
    transcript = app.query_one("#transcript", Transcript)
    transcript.notice("Publishing the changes…", "dim")
    try:
        event = await publish_changes(workspace)
    except GitHubError as exc:
        transcript.notice(f"Not published: {exc}. Nothing was lost: the edits are still here.", "error")
        return False
    session.emit(event)
    return (f"Published {len(event.files)} file(s) to {event.repository} branch {event.branch} "
            f"(commit {event.commit[:7]}): {event.compare_url}")
