"""F1: every key binding (with its id, for remapping in the config) and every slash command."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from rich.text import Text
from textual.widgets import DataTable, Static


def binding_rows() -> list[tuple[str, str, str]]:
    """(keys, what, binding id) for the app, the timeline, the transcript and the approval panel."""
    from tui.app import CoderApp
    from tui.widgets.approvalpanel import ApprovalPanel
    from tui.widgets.prompt import PromptInput
    from tui.widgets.earlier import EarlierRuns
    from tui.widgets.timeline import CheckpointEntry, Timeline
    from tui.widgets.transcript import ToolRow

    rows: list[tuple[str, str, str]] = []
    for owner in (CoderApp, PromptInput, Timeline, CheckpointEntry, EarlierRuns, ToolRow, ApprovalPanel):
        for binding in owner.BINDINGS:
            if isinstance(binding, Binding) and binding.id:
                rows.append((binding.key, binding.description or binding.action, binding.id))
    rows.append(("ctrl+p", "Command palette", ""))
    return rows


class KeysScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    KeysScreen { align: center middle; }
    KeysScreen > Vertical {
        width: 110; max-width: 96%; height: 90%; padding: 0 1;
        border: round $primary; background: $panel;
    }
    KeysScreen DataTable { height: 1fr; }
    KeysScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="keys.close")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Keys (remap any of them by id in config.toml: [keymap] \"app.quit\" = \"ctrl+x\")",
                         classes="hint", markup=False)
            yield DataTable(id="keys", cursor_type="row", zebra_stripes=True)
            yield Static("Slash commands (type / in the prompt)", classes="hint", markup=False)
            yield DataTable(id="commands", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        from tui.commands import SLASH_COMMANDS, custom_commands

        listed = [*SLASH_COMMANDS, *custom_commands(self.app)]  # type: ignore[arg-type]

        keys = self.query_one("#keys", DataTable)
        keys.add_columns("Keys", "Does", "Id")
        for row in binding_rows():
            keys.add_row(*row)
        commands = self.query_one("#commands", DataTable)
        names = max(len(name) for name, _ in listed) + 1
        commands.add_column("Command", width=names)
        commands.add_column("Does", width=self._description_width(names))
        for name, description in listed:
            # Plain text, not markup ("[revoke TOOL | revoke all]" is shown), wrapped, never cut.
            commands.add_row(Text(f"/{name}"), Text(description), height=None)
        keys.focus()

    def _description_width(self, names: int) -> int:
        """What is left of the box (110 cells or 96% of the screen) beside the command names:
        border, padding, both cells' padding and the scrollbar."""
        box = min(110, self.app.size.width * 96 // 100)
        return max(20, box - 4 - names - 4 - 2)
