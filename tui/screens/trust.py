"""Trust a folder? Asked when its own files (.coder-tui.toml, profiles) want settings an untrusted
folder may not have; the question names the files that do.

Either answer is remembered in the user config (`folder_trust`, with the folder's identity), so the
question comes once per folder; "Don't trust" opens the folder with those settings left out, and
the transcript says which each time. `coder-tui trust DIR` / `--revoke DIR` change the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class TrustScreen(ModalScreen[bool]):
    CSS_PATH = "trust.tcss"
    AUTO_FOCUS = "#no"  # the safe answer is the default
    BINDINGS = [
        Binding("t", "answer(True)", "Trust", id="trust.yes"),
        Binding("n,escape", "answer(False)", "Don't trust", id="trust.no"),
    ]

    def __init__(self, folder: Path, ignored: list[Any]) -> None:
        super().__init__()
        self.folder, self.ignored = folder, ignored

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-frame"):
            yield Static("Trust this folder?", id="trust-title")
            files = self._files()
            yield Static(
                f"{self.folder} came with {'a file' if len(files) == 1 else 'files'} ({', '.join(files)}) "
                f"that {'asks' if len(files) == 1 else 'ask'} for settings only a folder you trust may use:",
                classes="trust-text", markup=False)
            for line in self.ignored:
                with Horizontal(classes="trust-row"):  # a long item wraps under its text, not its bullet
                    yield Static("•", classes="trust-bullet", markup=False)
                    yield Static(f"{line.setting}: {line.why}", classes="trust-item", markup=False)
            yield Static("Trust it only if you know who wrote it. Without trust these settings are left "
                         "out and everything else applies. Your answer is remembered for this folder; "
                         "`coder-tui trust DIR` or `coder-tui trust --revoke DIR` changes it.",
                         id="trust-note", classes="trust-text", markup=False)
            with Horizontal(id="trust-actions"):
                yield Button("Don't trust (n)", id="no")
                yield Button("Trust this folder (t)", id="yes", variant="warning")

    def _files(self) -> list[str]:
        """The folder's own files the settings come from, as found (not a fixed list of places)."""
        shown = []
        for item in self.ignored:
            path = Path(item.file)
            shown.append(str(path.relative_to(self.folder)) if path.is_relative_to(self.folder) else item.file)
        return sorted(set(shown))

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
