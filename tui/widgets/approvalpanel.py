"""ApprovalPanel: the user decides on one tool call, in the main column below the conversation.

The panel docks under the last answer (the model's reason for the call stays in view above it)
in place of the prompt, takes the focus, and holds everything the decision needs: the proposed
change as a diff with its hunk controls (or the command / request), and the choices. `f` shows
it full screen for big changes. For an edit the user can reject single hunks (space, or a click
on a hunk header) or rewrite the proposal in place (e, then Ctrl+S); the resulting `Decision`
carries `rejected_hunks` and `edited` the way `narrow_changes` applies them.

When every hunk is rejected, allowing (y or a) denies instead, with feedback telling the model
so: applying nothing is what the user asked for, and the model should know it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePath
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.message import Message
from textual.widgets import Button, Input, Static, TextArea
from textual.widgets.text_area import LanguageDoesNotExist

from agent.approval import ApprovalRequest, Decision
from agent.diffing import FileChange, apply_hunks
from agent.events import DecisionKind
from agent.textsafe import line, visible
from tui.widgets.diffmodel import DiffFile, from_change
from tui.widgets.diffview import SPLIT_MIN_WIDTH, DiffView
from tui.widgets.approvalrule import RuleOffer

ALL_REJECTED = "The user rejected every hunk of the proposed change; nothing was applied."
# File suffix -> TextArea language (tree-sitter), for the in-place editor.
EDITOR_LANGUAGES = {
    ".py": "python", ".md": "markdown", ".json": "json", ".toml": "toml", ".yaml": "yaml",
    ".yml": "yaml", ".html": "html", ".htm": "html", ".css": "css", ".js": "javascript",
    ".mjs": "javascript", ".rs": "rust", ".go": "go", ".sql": "sql", ".java": "java",
    ".sh": "bash", ".bash": "bash", ".xml": "xml",
}
KIND_TITLES = {"edit": "Edit", "exec": "Run a command", "network": "Network access", "read": "Read"}
EDIT_ACTIONS = {"next_hunk", "previous_hunk", "toggle_hunk", "toggle_split", "edit"}
FILE_ACTIONS = {"next_file", "previous_file", "goto_file"}
REVIEW_ACTIONS = {"allow_once", "allow_all", "allow_always", "rule_target", "deny", "stop", "full_screen"} | EDIT_ACTIONS
# Two rows: the ways to allow (the session one names its tool), then deny, stop and the status.
ALLOW_CHOICES = (("Allow once (y)", "allow_once", "success"), ("", "allow_all", "primary"))
OTHER_CHOICES = (("Deny (n)", "deny", "warning"), ("Stop (esc)", "stop", "error"))
SPLIT_TERMINAL_WIDTH = SPLIT_MIN_WIDTH + 6  # the diff's width and the full-screen panel's frame
ALLOW_ONCE_WIDTH = len(ALLOW_CHOICES[0][0]) + 3  # label, padding, gap


def allow_all_label(tool: str, width: int = 1000, kind: str | None = None) -> str:
    """The "allow for the session" choice, as long as fits in `width` cells (padding included).

    For commands it says that it does not grant the network: a later command that asks for the
    network is asked for again (agent.approval.ApprovalGate)."""
    if kind == "exec":
        labels: tuple[str, ...] = (f"Allow {tool} for this session, without network (a)",
                                   f"Allow {tool} for session, no network (a)", "Allow for session, no network (a)",
                                   "Session, no network (a)")
    elif tool == "web_fetch":  # the session choice lets it fetch from any site, unasked
        labels = (f"Allow {tool} for this session, any site (a)", f"Allow {tool} for session, any site (a)",
                  "Allow for session, any site (a)", "Session, any site (a)")
    else:
        labels = (f"Allow {tool} for this session (a)", f"Allow {tool} for session (a)", "Allow for this session (a)")
    for label in labels:
        if len(label) + 3 <= width:
            return label
    return "Session (a)"


def edit_reason(request: ApprovalRequest) -> str:
    """The `reason` the model gave for an edit (edit tools take it optionally), or ""."""
    reason = request.args.get("reason") or next((c.reason for c in request.changes if c.reason), "")
    return str(reason).strip()


class ApprovalPanel(Vertical, can_focus=True):
    """Posts `Decided` (and completes `wait()`) with the user's `Decision` for `request`."""

    DEFAULT_CSS = Path(__file__).with_name("approvalpanel.tcss").read_text(encoding="utf-8")
    ALLOW_MAXIMIZE = True
    BINDINGS = [
        Binding("y", "allow_once", "Allow once", id="approval.allow_once"),
        Binding("a", "allow_all", "Allow for this session", id="approval.allow_all"),
        Binding("n", "deny", "Deny", id="approval.deny"),
        Binding("r", "allow_always", "Always allow", id="approval.allow_always"),  # tui/widgets/approvalrule.py
        Binding("w", "rule_target", "Rule: config or workspace", show=False, id="approval.rule_target"),
        # The editor and the feedback input take Esc first, to close themselves.
        Binding("escape", "back", "Back", priority=True, id="approval.back"),
        Binding("escape", "stop", "Stop", id="approval.stop"),
        Binding("ctrl+s", "save_edit", "Apply edit", priority=True, id="approval.save_edit"),
        Binding("space", "toggle_hunk", "Toggle hunk", id="approval.toggle_hunk"),
        # One footer entry for both directions keeps the footer short.
        Binding("j,]", "next_hunk", "Next/prev hunk", key_display="j/k", id="approval.next_hunk"),
        Binding("k,[", "previous_hunk", "Previous hunk", show=False, id="approval.previous_hunk"),
        Binding("e", "edit", "Edit", id="approval.edit"),
        Binding("s", "toggle_split", "Split", id="approval.toggle_split"),
        Binding("f", "full_screen", "Full screen", id="approval.full_screen"),
        # Shown as a hint on the status line instead.
        Binding("tab", "next_file", "Next file", show=False, id="approval.next_file"),
        Binding("shift+tab", "previous_file", "Previous file", show=False, id="approval.previous_file"),
    ]

    class Decided(Message):
        def __init__(self, panel: ApprovalPanel, decision: Decision) -> None:
            super().__init__()
            self.panel, self.decision = panel, decision

        @property
        def control(self) -> ApprovalPanel:
            return self.panel

    def __init__(self, request: ApprovalRequest, *, split: bool = False, id: str | None = "approval") -> None:
        super().__init__(id=id, classes=f"-{request.kind}")
        self.request = request
        self._split = split
        self._mode = "review"  # or "feedback" (typing a deny reason) or "edit" (in the editor)
        self._edited: dict[str, str] = {}  # path -> the user's own version of the new content
        self._file = 0  # the file being looked at: the cursor's, or the one last jumped to
        self.decision: Decision | None = None
        self._answered = asyncio.Event()

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        request = self.request
        self.border_title = f"{KIND_TITLES[request.kind]} · {line(request.tool)}"
        if request.asker:  # a subagent asks, through its parent: which one, and on what task
            self.border_title += f" · subagent {line(request.asker)[:80]}"
        if request.kind == "edit":
            # The diff's own file headers name the files: said once, not again above them.
            files = [from_change(change) for change in request.changes]
            if why := edit_reason(request):  # the tool schema promises the model's reason is shown
                yield Static(Content.assemble(("why: ", "$text-muted"), line(why)), id="approval-reason",
                             classes="approval-fact")
            for path, what in getattr(request, "protected", {}).items():  # coder-tui's own configuration
                yield Static(Content.assemble(("protected: ", "bold $warning"), (
                    f"{line(path)} is {what}: asked in every mode; what it would let the agent do applies once "
                    "you confirm it (`coder-tui trust`)", "$warning")), classes="approval-fact approval-protected")
            yield DiffView(files, split=self._split, id="approval-diff")
        else:
            yield VerticalScroll(*self._request_details(), id="approval-details")
        feedback = Input(placeholder="Why? The agent reads this (optional)", id="approval-feedback")
        feedback.border_title = "Deny · Enter confirms · Esc goes back"
        # Docked at the panel's bottom: on a small terminal the diff gives way, never the buttons.
        with Vertical(id="approval-bottom"):
            yield feedback
            yield RuleOffer(request)
            with Horizontal(id="approval-actions"):
                yield from self._buttons(ALLOW_CHOICES)
            with Horizontal(id="approval-more"):
                yield from self._buttons(OTHER_CHOICES)
                yield Static(id="approval-status")

    def _buttons(self, choices: tuple[tuple[str, str, str], ...]) -> ComposeResult:
        for label, action, variant in choices:
            button = Button(Content(label or allow_all_label(self.request.tool, kind=self.request.kind)), variant=variant, compact=True,
                            id=f"approval-{action.replace('_', '-')}")
            button.can_focus = False  # keys drive the panel; the buttons are for the mouse
            yield button

    def _request_details(self) -> list[Static]:
        request = self.request
        if request.kind == "exec":
            # Shown, not acted on: `rm -rf src; : \x1b[2K\r$ ls` must not read as `$ ls`.
            command = visible(request.command or str(request.args.get("command", "")))
            facts = [("Folder", line(request.cwd or "."))]
            if session := request.args.get("session_id"):
                facts.append(("Shell", line(str(session))))
            if request.timeout is not None:
                facts.append(("Timeout", f"{request.timeout} s"))
            if request.args.get("network") is True:  # the sandbox gives it only when allowed here
                facts.append(("Network", 'asked for: "Allow once" grants it for this command only'))
            # The command once (the summary repeats it): highlighted, with where and how long.
            return [
                Static(Content("$ ").stylize("$text-muted") + highlight(command, language="bash"),
                       id="approval-command"),
                Static(Content.assemble(*[part for label, value in facts for part in (
                    (f"{label} ", "$text-muted"), (value, "bold"), ("   ", ""))]), classes="approval-fact"),
            ]
        url = line(request.url or str(request.args.get("url", "")))
        details = []
        if url:
            details.append(Static(Content.assemble(("URL      ", "$text-muted"), (url, "bold underline $text-primary")),
                                  id="approval-url", classes="approval-fact"))
        elif request.summary:  # e.g. a GitHub comment or pull request: the summary is the content
            details.append(Static(visible(request.summary), id="approval-summary", markup=False))
        if prompt := request.args.get("prompt"):
            details.append(Static(Content.assemble(("Prompt   ", "$text-muted"), visible(str(prompt))),
                                  id="approval-prompt", classes="approval-fact"))
        return details

    def on_mount(self) -> None:
        self._refresh_header()
        self._fit_choices()
        self.focus_review()

    @property
    def diff(self) -> DiffView:
        return self.query_one("#approval-diff", DiffView)

    def _refresh_header(self) -> None:
        # Also called after a refresh, when the panel may be going: its children are removed before
        # it is (answered elsewhere, under load: seen as a NoMatches traceback in an attached app).
        if self.decision is not None or not self.is_attached:
            return
        if not self.query("#approval-status") or (self.request.kind == "edit" and not self.query("#approval-diff")):
            return
        self.query_one("#approval-status", Static).update(self._status())

    def _status(self) -> Content:
        hints = "f full screen" if not self.is_maximized else "f back to the conversation"
        if self.request.kind != "edit":
            return Content(hints).stylize("$text-muted")
        view = self.diff
        order = view.hunk_order
        rejected = sum(len(hunks) for hunks in view.rejected_hunks().values())
        position = f"hunk {order.index(view.cursor) + 1}/{len(order)}" if view.cursor in order else "no hunks"
        parts = [position]
        if len(view.files) > 1:
            parts.append(f"file {self._file + 1}/{len(view.files)} (tab: next)")
        parts.append(f"{rejected} rejected" if rejected else "all accepted")
        if view.is_split:  # unified is the usual view: said only when it is not
            parts.append("split")
        parts.append(hints)
        return Content(" · ".join(parts)).stylize("$text-muted")

    def _fit_choices(self) -> None:
        """The session choice names the tool when the row has room for it."""
        width = self.content_region.width
        if not width:  # not laid out yet: the first resize fits it (the app's width would be a wrong guess)
            return
        label = allow_all_label(self.request.tool, width - ALLOW_ONCE_WIDTH, self.request.kind)
        for button in self.query("#approval-allow-all").results(Button):  # none once the panel is going
            button.label = Content(label)

    def on_diff_view_cursor_moved(self, message: DiffView.CursorMoved) -> None:
        self._file = message.file_index
        self._refresh_header()

    def on_diff_view_hunk_toggled(self, _message: DiffView.HunkToggled) -> None:
        self._refresh_header()

    def on_resize(self) -> None:
        self._fit_choices()
        self.call_after_refresh(self._refresh_header)

    # -- which keys apply when ------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self._mode != "review"
        if action == "save_edit":
            return self._mode == "edit"
        if action in FILE_ACTIONS:
            # Held in review even with one file, so Tab never moves the focus out of the panel.
            return self._mode != "edit"
        if action not in REVIEW_ACTIONS:
            return True
        if self._mode != "review":
            return False
        if action in EDIT_ACTIONS:
            return self.request.kind == "edit" and bool(self.request.changes)
        if action in ("allow_always", "rule_target"):
            return bool(self.query_one(RuleOffer).rules)
        return True

    def _set_mode(self, mode: str) -> None:
        self._mode = mode
        self.set_class(mode == "feedback", "-feedback")
        self.set_class(mode == "edit", "-editing")
        self.refresh_bindings()

    # -- decisions -----------------------------------------------------------------------------

    async def wait(self) -> Decision:
        await self._answered.wait()
        assert self.decision is not None
        return self.decision

    def _decide(self, decision: Decision) -> None:
        if self.decision is not None:
            return
        self.decision = decision
        self._answered.set()
        self.post_message(self.Decided(self, decision))

    def action_allow_once(self) -> None:
        self._decide(self._allow("allow_once"))

    def action_allow_all(self) -> None:
        self._decide(self._allow("allow_all"))

    def action_allow_always(self) -> None:
        """Save the offered rule(s) (they apply from now on) and allow this call once."""
        problem = self.query_one(RuleOffer).save()
        if problem is not None:
            self.notify(f"The rule is not saved: {problem}", severity="error")
            return
        self._decide(self._allow("allow_once"))

    def action_rule_target(self) -> None:
        self.query_one(RuleOffer).toggle_target()

    def action_stop(self) -> None:
        self._decide(Decision("stop"))

    def action_deny(self) -> None:
        self._set_mode("feedback")
        self.query_one("#approval-feedback", Input).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = (event.button.id or "").removeprefix("approval-").replace("-", "_")
        if self.check_action(action, ()):
            getattr(self, f"action_{action}")()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._decide(Decision("deny", feedback=event.value.strip() or None))

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

    # -- navigation ----------------------------------------------------------------------------

    def action_next_hunk(self) -> None:
        self.diff.move_cursor(1)

    def action_previous_hunk(self) -> None:
        self.diff.move_cursor(-1)

    def action_toggle_hunk(self) -> None:
        self.diff.toggle_hunk()

    def action_toggle_split(self) -> None:
        view = self.diff
        if not view.is_split and self.screen.size.width < SPLIT_TERMINAL_WIDTH:
            # Not even full screen has room (the border, padding and scrollbar take 6 columns).
            self.notify(f"Split view needs {SPLIT_MIN_WIDTH} columns for the diff: a terminal at least "
                        f"{SPLIT_TERMINAL_WIDTH} wide (this one is {self.screen.size.width}); staying unified.",
                        severity="warning")
            return
        if (not view.is_split and not self.is_maximized and view.size.width < SPLIT_MIN_WIDTH + 1
                and self.screen.size.width >= SPLIT_TERMINAL_WIDTH):
            # Too narrow under the conversation, wide enough on its own: full screen, then split.
            self.action_full_screen()
            self.call_after_refresh(self.action_toggle_split)
            return
        if view.toggle_split():
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
        if self.request.kind == "edit" and len(self.request.changes) > 1:
            self.action_goto_file((self._file + delta) % len(self.request.changes))

    def action_full_screen(self) -> None:
        """The panel alone on the screen (big changes), or back under the conversation."""
        screen = self.screen
        if self.is_maximized:
            screen.minimize()
        else:
            screen.maximize(self, container=False)
        self.call_after_refresh(self._refresh_header)
        self.focus_review()

    def focus_review(self) -> None:
        """Keys go to the diff for an edit (it scrolls), to the panel itself otherwise."""
        if self.request.kind == "edit":
            self.diff.focus()
        else:
            self.focus()

    # -- editing in place ----------------------------------------------------------------------

    def action_edit(self) -> None:
        change = self.request.changes[self._file]
        if change.new is None:
            self.notify("This change deletes the file: there is no new content to edit.",
                        severity="warning")
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
        self.mount(editor, after=self.diff)
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
        self.focus_review()

    def _close_editor(self) -> None:
        self.query_one("#approval-editor", TextArea).remove()
        self._set_mode("review")
        self.focus_review()
        self._refresh_header()

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

    def on_unmount(self) -> None:
        if self.is_maximized:
            self.screen.minimize()
