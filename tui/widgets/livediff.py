"""The strip above the prompt: edits landing without a question, and progress of slow starts.

In allow mode (or after "allow all") edits are applied without the approval screen, but they
still show here as they land, read-only, in the same diff view. Ctrl+D shows or hides it. The
same strip shows a progress bar while a GitHub clone or a room join takes its time. The app
mounts it the first time it has something to show; it keeps its state in attributes and
composes from them, so it can be told things before its children exist.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label


class LiveDiff(Vertical):
    DEFAULT_CSS = """
    LiveDiff {
        display: none;
        height: auto;
        max-height: 45%;
        border-top: solid $primary;
        padding: 0 1;
        &.-open { display: block; }
        & #livediff-title { color: $text-muted; }
        & DiffView { height: auto; max-height: 20; }
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.diffs: dict[str, str] = {}  # path -> unified diff of what landed in this run
        self.stage: str | None = None  # what is in progress, when something is
        self.done, self.total = 0, 0

    def compose(self) -> ComposeResult:
        yield Label(self._title(), id="livediff-title")
        if self.stage is not None:
            from textual.widgets import ProgressBar

            bar = ProgressBar(id="livediff-progress", show_eta=False)
            bar.update(total=self.total or None, progress=self.done)
            yield bar
        elif self.diffs:
            from tui.widgets.diffmodel import parse_unified
            from tui.widgets.diffview import DiffView

            yield DiffView([f for path, diff in self.diffs.items() for f in parse_unified(diff, path)], readonly=True)

    def _title(self) -> str:
        if self.stage is not None:
            return self.stage
        count = len(self.diffs)
        return f"Applied without asking ({count} file{'s' if count != 1 else ''}) · Ctrl+D hides"

    # -- edits ----------------------------------------------------------------------------
    def landed(self, event: Any, approved: bool) -> None:
        """A file change was applied; show it unless the user just approved it in the diff screen."""
        if approved:
            return
        self.diffs[event.path] = event.diff
        self.add_class("-open")
        self.refresh(recompose=True)

    def new_run(self) -> None:
        """A new request: what the last one applied is no longer news."""
        if self.diffs:
            self.diffs.clear()
            self.set_class(self.stage is not None, "-open")
            self.refresh(recompose=True)

    def toggle(self) -> None:
        if self.diffs or self.has_class("-open"):
            self.toggle_class("-open")
        else:
            self.app.notify("Ctrl+D shows the edits applied without asking (allow mode, or a tool allowed for the "
                            "session) as they land: none yet. Edits you approve open their diff when asked.",
                            timeout=5)

    # -- progress -------------------------------------------------------------------------
    def progress(self, label: str | None) -> None:
        """Show (label) or end (None) a progress bar for something slow."""
        self.stage, self.done, self.total = label, 0, 0
        self.set_class(label is not None or bool(self.diffs), "-open")
        self.refresh(recompose=True)

    def advance(self, stage: str, done: int, total: int) -> None:
        changed = stage != self.stage
        self.stage, self.done, self.total = stage, done, total
        bars = self.query("#livediff-progress")
        if changed or not bars:
            self.add_class("-open")
            self.refresh(recompose=True)
            return
        bars.first().update(total=total or None, progress=done)
