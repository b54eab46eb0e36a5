"""ApprovalScreen: the user decides on one tool call the agent wants to make.

For an edit it shows the proposed change as a diff, and the user can reject single hunks
(space, or a click on a hunk header) or rewrite the proposal in place (e, then Ctrl+S); the
resulting `Decision` carries `rejected_hunks` and `edited` the way `narrow_changes` applies
them. For a command or network request it shows what would run or be fetched.

When every hunk is rejected, allowing (y or a) denies instead, with feedback telling the
model so: applying nothing is what the user asked for, and the model should know it.
"""

from __future__ import annotations

from pathlib import PurePath

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static, TextArea
from textual.widgets.text_area import LanguageDoesNotExist

from agent.approval import ApprovalRequest, Decision
from agent.diffing import FileChange, apply_hunks
from agent.events import DecisionKind
from tui.widgets.diffmodel import DiffFile, from_change
from tui.widgets.diffview import DiffView

ALL_REJECTED = "The user rejected every hunk of the proposed change; nothing was applied."
# File suffix -> TextArea language (tree-sitter), for the in-place editor.
EDITOR_LANGUAGES = {
    ".py": "python", ".md": "markdown", ".json": "json", ".toml": "toml", ".yaml": "yaml",
    ".yml": "yaml", ".html": "html", ".htm": "html", ".css": "css", ".js": "javascript",
    ".mjs": "javascript", ".rs": "rust", ".go": "go", ".sql": "sql", ".java": "java",
    ".sh": "bash", ".bash": "bash", ".xml": "xml",
}
KIND_TITLES = {"edit": "Edit files", "exec": "Run a command", "network": "Network access"}
EDIT_ACTIONS = {"next_hunk", "previous_hunk", "toggle_hunk", "toggle_split", "edit"}
FILE_ACTIONS = {"next_file", "previous_file", "goto_file"}
REVIEW_ACTIONS = {"allow_once", "allow_all", "deny", "stop"} | EDIT_ACTIONS | FILE_ACTIONS


class ApprovalScreen(ModalScreen[Decision]):
    """Dismisses with the user's `Decision` for `request`."""

    CSS_PATH = "approval.tcss"
    BINDINGS = [
        Binding("y", "allow_once", "Allow once", id="approval.allow_once"),
        Binding("a", "allow_all", "Allow all", id="approval.allow_all"),
        Binding("n", "deny", "Deny", id="approval.deny"),
        # The editor and the feedback input take Esc first, to close themselves.
        Binding("escape", "back", "Back", priority=True, id="approval.back"),
        Binding("escape", "stop", "Stop", id="approval.stop"),
        Binding("ctrl+s", "save_edit", "Apply edit", priority=True, id="approval.save_edit"),
        Binding("space", "toggle_hunk", "Toggle hunk", id="approval.toggle_hunk"),
        # One footer entry for both directions keeps the footer within 100 columns.
        Binding("j,]", "next_hunk", "Next/prev hunk", key_display="j/k", id="approval.next_hunk"),
        Binding("k,[", "previous_hunk", "Previous hunk", show=False, id="approval.previous_hunk"),
        Binding("e", "edit", "Edit", id="approval.edit"),
        Binding("s", "toggle_split", "Split", id="approval.toggle_split"),
        # Shown as a hint in the file list instead: the footer has no room left at 100 columns.
        Binding("tab", "next_file", "Next file", show=False, id="approval.next_file"),
        Binding("shift+tab", "previous_file", "Previous file", show=False, id="approval.previous_file"),
    ]

    def __init__(self, request: ApprovalRequest, *, split: bool = False) -> None:
        super().__init__()
        self.request = request
        self._split = split
        self._mode = "review"  # or "feedback" (typing a deny reason) or "edit" (in the editor)
        self._edited: dict[str, str] = {}  # path -> the user's own version of the new content
        self._file = 0  # the file being looked at: the cursor's, or the one last jumped to

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="approval-dialog") as dialog:
            dialog.border_title = f"{KIND_TITLES[request.kind]} · {request.tool}"
            if request.summary:
                yield Static(request.summary, id="approval-summary", markup=False)
            if request.kind == "edit":
                yield Static(id="approval-files")
                files = [from_change(change) for change in request.changes]
                yield DiffView(files, split=self._split, id="approval-diff")
            else:
                yield VerticalScroll(*self._request_details(), id="approval-details")
            feedback = Input(placeholder="Why? The agent reads this (optional)", id="approval-feedback")
            feedback.border_title = "Deny · Enter confirms · Esc goes back"
            yield feedback
            with Horizontal(id="approval-actions"):
                yield Static(id="approval-status")
                for label, action, variant in (
                    ("Allow once (y)", "allow_once", "success"), ("Allow all (a)", "allow_all", "primary"),
                    ("Deny (n)", "deny", "warning"), ("Stop (esc)", "stop", "error"),
                ):
                    button = Button(Content(label), variant=variant, action=f"screen.{action}", compact=True,
                                    id=f"approval-{action.replace('_', '-')}")
                    button.can_focus = False  # keys drive the screen; the buttons are for the mouse
                    yield button
        yield Footer(compact=True)

    def _request_details(self) -> list[Static]:
        request = self.request
        if request.kind == "exec":
            command = request.command or str(request.args.get("command", ""))
            facts = [("Folder", request.cwd or ".")]
            if request.timeout is not None:
                facts.append(("Timeout", f"{request.timeout} s"))
            return [
                Static(Content("$ ").stylize("$text-muted") + highlight(command, language="bash"),
                       id="approval-command"),
                *(Static(Content.assemble((f"{label:<9}", "$text-muted"), (value, "bold")),
                         classes="approval-fact") for label, value in facts),
            ]
        url = request.url or str(request.args.get("url", ""))
        details = [Static(Content.assemble(("URL      ", "$text-muted"), (url, "bold underline $text-primary")),
                          id="approval-url", classes="approval-fact")]
        if prompt := request.args.get("prompt"):
            details.append(Static(Content.assemble(("Prompt   ", "$text-muted"), str(prompt)),
                                  id="approval-prompt", classes="approval-fact"))
        return details

    def on_mount(self) -> None:
        # Commands and URLs are short: a dialog sized to them, not a full-screen one.
        self.set_class(self.request.kind != "edit", "-compact")
        if self.request.kind == "edit":
            self.query_one(DiffView).focus()
            self._refresh_header()

    @property
    def diff(self) -> DiffView:
        return self.query_one("#approval-diff", DiffView)

    def _refresh_header(self) -> None:
        """File list (clickable) and the status line under the diff."""
        view = self.diff
        several = len(view.files) > 1
        chosen = "bold $block-cursor-foreground on $block-cursor-background"
        parts: list[Content | tuple[str, str] | str] = []
        for index, file in enumerate(view.files):
            style = f"{chosen if several and index == self._file else 'bold'} @click=screen.goto_file({index})"
            parts += [("  " if index else "", ""), (file.path, style), " ",
                      (f"+{file.added}", "$text-success"), " ", (f"-{file.removed}", "$text-error")]
            tag = "new" if file.created else "deleted" if file.deleted else ""
            parts += [(f" {tag}", "italic $text-muted")] if tag else []
            parts += [(" edited", "italic $text-warning")] if file.edited else []
        if several:
            parts.append(("   tab: next file", "$text-muted"))
        self.query_one("#approval-files", Static).update(Content.assemble(*parts))
        self.query_one("#approval-status", Static).update(self._status())

    def _status(self) -> Content:
        view = self.diff
        order = view.hunk_order
        rejected = sum(len(hunks) for hunks in view.rejected_hunks().values())
        position = f"hunk {order.index(view.cursor) + 1}/{len(order)}" if view.cursor in order else "no hunks"
        parts = [position]
        if len(view.files) > 1:
            parts.append(f"file {self._file + 1}/{len(view.files)}")
        parts.append(f"{rejected} rejected" if rejected else "all accepted")
        parts.append("split" if view.is_split else "unified")
        return Content(" · ".join(parts)).stylize("$text-muted")

    def on_diff_view_cursor_moved(self, message: DiffView.CursorMoved) -> None:
        self._file = message.file_index
        self._refresh_header()

    def on_diff_view_hunk_toggled(self, _message: DiffView.HunkToggled) -> None:
        self._refresh_header()

    def on_resize(self) -> None:
        if self.request.kind == "edit":
            self.call_after_refresh(self._refresh_header)

    # -- which keys apply when ------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self._mode != "review"
        if action == "save_edit":
            return self._mode == "edit"
        if action not in REVIEW_ACTIONS:
            return True
        if self._mode != "review":
            return False
        if action in EDIT_ACTIONS:
            return self.request.kind == "edit" and bool(self.request.changes)
        if action in FILE_ACTIONS:
            return self.request.kind == "edit" and len(self.request.changes) > 1
        return True

    def _set_mode(self, mode: str) -> None:
        self._mode = mode
        self.set_class(mode == "feedback", "-feedback")
        self.set_class(mode == "edit", "-editing")
        self.refresh_bindings()

    # -- decisions -----------------------------------------------------------------------------

    def action_allow_once(self) -> None:
        self.dismiss(self._allow("allow_once"))

    def action_allow_all(self) -> None:
        self.dismiss(self._allow("allow_all"))

    def action_stop(self) -> None:
        self.dismiss(Decision("stop"))

    def action_deny(self) -> None:
        self._set_mode("feedback")
        self.query_one("#approval-feedback", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(Decision("deny", feedback=event.value.strip() or None))

    def _allow(self, kind: DecisionKind) -> Decision:
        if self.request.kind != "edit":
            return Decision(kind)
        view = self.diff
        order = view.hunk_order
        if order and all(view.is_rejected(*hunk) for hunk in order):
            return Decision("deny", feedback=ALL_REJECTED)
        decision = Decision(kind)
        rejected = view.rejected_hunks()
        for index, change in enumerate(self.request.changes):
            hunks = rejected.get(index, [])
            if change.path in self._edited:
                self._narrow_edit(decision, change, hunks, len(view.files[index].hunks))
            elif hunks:
                decision.rejected_hunks[change.path] = hunks
        return decision

    def _narrow_edit(self, decision: Decision, change: FileChange, rejected: list[int], total: int) -> None:
        """Hunks the user rejected in their own version are left out of what gets applied."""
        text = self._edited[change.path]
        if rejected and len(rejected) == total:
            decision.rejected_hunks[change.path] = list(range(len(change.hunks())))
        elif rejected:
            kept = set(range(total)) - set(rejected)
            decision.edited[change.path] = apply_hunks(change.old or "", text, kept)
        else:
            decision.edited[change.path] = text

    # -- navigation ----------------------------------------------------------------------------

    def action_next_hunk(self) -> None:
        self.diff.move_cursor(1)

    def action_previous_hunk(self) -> None:
        self.diff.move_cursor(-1)

    def action_toggle_hunk(self) -> None:
        self.diff.toggle_hunk()

    def action_toggle_split(self) -> None:
        if self.diff.toggle_split():
            self._refresh_header()

    def action_goto_file(self, index: int) -> None:
        self._file = index
        self.diff.goto_file(index)
        self._refresh_header()

    def action_next_file(self) -> None:
        self._step_file(1)

    def action_previous_file(self) -> None:
        self._step_file(-1)

    def _step_file(self, delta: int) -> None:
        self.action_goto_file((self._file + delta) % len(self.request.changes))

    # -- editing in place ----------------------------------------------------------------------

    def action_edit(self) -> None:
        change = self.request.changes[self._file]
        if change.new is None:
            self.notify("This change deletes the file: there is no new content to edit.", severity="warning")
            return
        editor = TextArea.code_editor(self._edited.get(change.path, change.new), theme="css",
                                      id="approval-editor")
        language = EDITOR_LANGUAGES.get(PurePath(change.path).suffix.lower())
        if language in editor.available_languages:
            try:
                editor.language = language
            except LanguageDoesNotExist:
                # tree-sitter is there (the codebase map needs it) but not Textual's grammar: plain
                # text still edits fine. The failed assignment stays set and would fail on every edit.
                editor.language = None
        editor.border_title = f"Editing {change.path} · Ctrl+S applies · Esc cancels"
        self.query_one("#approval-dialog").mount(editor, after=self.diff)
        self._set_mode("edit")
        editor.focus()

    def action_save_edit(self) -> None:
        editor = self.query_one("#approval-editor", TextArea)
        change = self.request.changes[self._file]
        text = editor.text
        model: DiffFile = from_change(change)
        if text == change.new:
            self._edited.pop(change.path, None)  # back to the proposal as the agent made it
        else:
            self._edited[change.path] = text
            model = from_change(FileChange(change.path, change.old, text))
            model.edited = True
        self.diff.replace_file(self._file, model)
        self._close_editor()

    def action_back(self) -> None:
        if self._mode == "edit":
            self._close_editor()
            return
        feedback = self.query_one("#approval-feedback", Input)
        feedback.value = ""
        self._set_mode("review")
        self._focus_review()

    def _close_editor(self) -> None:
        self.query_one("#approval-editor", TextArea).remove()
        self._set_mode("review")
        self._focus_review()
        self._refresh_header()

    def _focus_review(self) -> None:
        if self.request.kind == "edit":
            self.diff.focus()
        else:
            self.set_focus(None)
