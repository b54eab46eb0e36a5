"""The Textual app: wiring only. Layout, bindings, and who handles what.

Main column: the transcript and the prompt. Side panel: the plan / timeline over the workspace
or room pane. Status bar and footer at the bottom. The first frame is the real layout; the agent
core, config and workspace load in a worker right after it (see tui/boot.py).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen

from tui.appcontext import in_context, later
from tui.bridge import AgentBridge
from tui.gcpolicy import GcPolicy
from tui.notify import Notifier
from tui.pathfmt import home_relative
from tui.theme_vars import derive_app_variables
from tui.widgets.footer import KeyHints
from tui.widgets.prompt_standin import PromptStandIn
from tui.widgets.spinner import TICK
from tui.widgets.statusbar import MODES, StatusBar
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:  # the app's parts load after the first frame; the type checker sees them all
    from argparse import Namespace

    from agent.approval import ApprovalRequest, Decision
    from agent.config import Config
    from agent.events import Event
    from agent.planning.review import PlanReviewer
    from agent.session.core import AgentSession
    from tui.knowledge import ExploreRun
    from tui.presenter import Presenter
    from tui.widgets.livediff import LiveDiff
    from tui.widgets.prompt import PromptInput
    from tui.widgets.timeline import Timeline

NARROW = 100  # columns below which the side panel folds away behind Ctrl+B
WELCOME = ("Ask for a change or a question. {mode} mode: Shift+Tab switches plan / ask / allow. "
           "/ for commands, @ to attach a file, F1 for keys.")


class CoderApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    AUTO_FOCUS = "#prompt, PromptStandIn"
    TITLE = "coder-tui"
    ESCAPE_TO_MINIMIZE = False  # Esc stops, also in an approval shown full screen (f goes back)
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("ctrl+c", "interrupt", "Stop / quit", show=False, priority=True, id="app.interrupt"),
        Binding("escape", "stop", "Stop the run", show=False, id="app.stop"),
        Binding("shift+tab", "cycle_mode", "Mode", priority=True, id="app.cycle_mode"),
        Binding("ctrl+b", "toggle_side", "Side panel", id="app.toggle_side"),
        Binding("ctrl+d", "toggle_diff", "Last diff", show=False, id="app.toggle_diff"),
        Binding("ctrl+n", "new_session", "New session", show=False, id="app.new_session"),
        Binding("ctrl+t", "focus_timeline", "Timeline", show=False, id="app.focus_timeline"),
        Binding("f1", "show_keys", "Keys", id="app.keys"),
    ]

    def __init__(self, options: Namespace, animate: bool = True) -> None:
        super().__init__()
        self.options = options
        self.animate_spinners = animate
        self.config: Config | None = None
        self.mode: str = options.mode or "ask"
        self.bridge = AgentBridge(self, self.show_event)
        self.notifier = Notifier.of_app(self)  # desktop notifications while the terminal is not focused
        self.presenter: Presenter | None = None  # made with the side panel, right after the first frame
        self.last_interrupt = 0.0  # when Ctrl+C last asked to press it again (tui/quitflow.py)
        self.explore_run: ExploreRun | None = None  # /explore's background run (tui/knowledge.py)
        self.tasks_running = False  # due scheduled tasks run now (tui/knowledge.py)
        self._remember_theme = False  # only a theme the user picks is saved
        self.gc_policy = GcPolicy()
        from tui.themes import saved_theme, start_first_theme

        # The other built-in themes follow the first frame; user themes are validated after it.
        self.wanted_theme = options.theme or saved_theme()
        start_first_theme(self, self.wanted_theme)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return derive_app_variables(self.current_theme)

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield Transcript(last_input=lambda: self.gc_policy.last_input, id="transcript")
                # The real prompt (#prompt) replaces it right after the first frame (tui/startup.py).
                yield PromptStandIn()
            yield Vertical(id="side")  # its timeline and pane come right after the first frame
        yield StatusBar(self.mode, id="status")
        yield KeyHints()

    def slash_commands(self) -> list[tuple[str, str]]:
        from tui.commands import SLASH_COMMANDS, custom_commands

        builtin = [c for c in SLASH_COMMANDS if self.options.github or c[0] != "pr"]  # /pr: GitHub only
        return builtin + custom_commands(self)  # the user's and the trusted workspace's (agent/custom)

    def on_mount(self) -> None:
        status = self.query_one(StatusBar)
        status.set_workspace(self._target_label())
        status.set_model(self.options.model or "")
        self.query_one(Transcript).notice(WELCOME.format(mode=self.mode.upper()), "dim").add_class("-welcome")
        if self.animate_spinners:
            self.set_interval(TICK, self._tick, name="spinners")
        self.call_after_refresh(self._first_frame_shown)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self.gc_policy.key_pressed()
        await super().on_event(event)

    def on_resize(self, event: events.Resize) -> None:
        # The new size: this handler runs before App's own, which is what updates self.size.
        narrow = event.size.width < NARROW
        main = self.screen_stack[0]  # the layout's screen, also when a dialog is on top
        if narrow != main.has_class("-narrow"):  # a class change restyles every widget
            main.set_class(narrow, "-narrow")
            footer = main.query_one(KeyHints)  # narrow: the keys' hints fit, Ctrl+P's gives way (F1 lists it)
            footer.compact, footer.show_command_palette = narrow, not narrow
            footer.refresh(recompose=True)  # the palette's key goes only when the keys are made again

    def get_key_display(self, binding: Binding) -> str:
        return super().get_key_display(binding).replace("shift+", "⇧")

    async def _first_frame_shown(self) -> None:
        from tui.startup import first_frame_shown

        await first_frame_shown(self)

    def restart_boot(self) -> None:
        self.bridge.clear_failure()
        self.query_one(StatusBar).set_state("loading")
        self.start_boot()

    @work(name="boot", group="boot", exit_on_error=False)
    async def start_boot(self) -> None:
        from tui.boot import boot

        try:
            await boot(self)
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback
            self.fatal(f"could not start the agent: {exc}", "Quit (Ctrl+Q) and start coder-tui again.")

    # -- called by boot and the bridge (tui/ports.py: BootHost, SessionHost) ---------------
    def run_task(self, work: Coroutine[Any, Any, None], name: str, group: str = "default") -> None:
        self.run_worker(work, name=name, group=group, exit_on_error=False)

    async def ask_approval(self, request: ApprovalRequest) -> Decision:
        from tui.widgets.approvaldock import dock

        self.bell()
        with in_context(self):  # asked from the agent's task: the panel's widgets start in the app's context
            return await dock(self, request)

    def plan_reviewer(self) -> PlanReviewer:
        from tui.screens.planreview import TuiPlanReviewer

        return TuiPlanReviewer(self)

    def configuration_failed(self, message: str) -> None:
        from tui.boot import apply_setup

        self.run_task(apply_setup(self, message), name="setup")

    def notice(self, text: str, kind: str = "info") -> None:
        self.query_one(Transcript).notice(text, kind)

    def show_model(self, model: str) -> None:
        self.query_one(StatusBar).set_model(model)

    def session_opened(self, session: AgentSession) -> None:
        from tui.startup import session_opened

        session_opened(self, session)

    def apply_keymap(self, keymap: dict[str, str]) -> None:
        from tui.startup import apply_keymap

        apply_keymap(self, keymap)

    def fatal(self, message: str, fix: str) -> None:
        """The agent cannot start: say why and what to do; the app stays open to read and quit."""
        self.bridge.fail(message, fix)
        self.notice(f"{message}\n{fix}", "error")
        self.query_one(StatusBar).set_state("not ready", "")

    def agent_idle(self) -> None:
        self.query_one(StatusBar).set_state("idle")
        self.refresh_pane()

    def show_prompt(self, text: str, mentions: list[str]) -> None:
        from tui.prompting import show_prompt

        show_prompt(self, text, mentions)

    def restore_prompt(self, text: str) -> None:
        from tui.prompting import restore_prompt

        restore_prompt(self, text)

    def show_prompt_of(self, text: str, who: str) -> None:
        self.query_one(Transcript).user(text, who)

    def send_prompt(self, text: str, mentions: list[str] | None = None) -> None:
        from tui.prompting import send_prompt

        send_prompt(self, text, mentions or [])

    def refresh_pane(self) -> None:
        from tui.panes import refresh_pane

        with in_context(self):  # the room client's listeners call this from the client's tasks
            refresh_pane(self)

    # -- the strip above the prompt: applied diffs, progress --------------------------------
    def live_diff(self) -> LiveDiff:
        """The strip, mounted the first time it has something to show (not on the first frame)."""
        from tui.widgets.livediff import LiveDiff

        found = self.query(LiveDiff)
        if found:
            return found.first()
        strip = LiveDiff(id="livediff")
        self.query_one("#main").mount(strip, before="#prompt")
        return strip

    def show_progress(self, label: str | None) -> None:
        self.live_diff().progress(label)

    def github_progress(self, stage: str, done: int, total: int) -> None:
        self.call_from_thread_safe(lambda: self.live_diff().advance(stage, done, total))

    def call_from_thread_safe(self, callback: Callable[[], object]) -> None:
        import threading

        if threading.get_ident() == self._thread_id:
            callback()
        else:
            self.call_from_thread(callback)

    # -- events from widgets --------------------------------------------------------------
    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text.strip()
        if text.startswith("/"):
            from tui.prompting import run_command

            run_command(self, text)
            return
        from tui.knowledge import routed_explore

        if routed_explore(self, text):  # "start exploring" / "stop exploring": the router acts directly
            return
        self.send_prompt(text, message.mentions)

    def on_prompt_input_files_wanted(self) -> None:
        self.load_files()  # files made since the last list (by the user or the agent)

    def on_timeline_restore_requested(self, message: Timeline.RestoreRequested) -> None:  # loads after the first frame
        from tui.commands import restore_checkpoint

        self.focus_prompt()  # where focus returns after the dialog: a stray Enter or `y` cannot restore again
        self.run_worker(restore_checkpoint(self, message.checkpoint_id, message.label, confirm=True),
                        name="restore", group="commands", exit_on_error=False)

    @on(StatusBar.ModeClicked)
    def _badge(self) -> None:
        self.action_cycle_mode()

    @on(StatusBar.AllowancesClicked)
    def _allowances(self) -> None:
        from tui.prompting import run_command

        run_command(self, "/allowances")

    # -- actions --------------------------------------------------------------------------
    MAIN_SCREEN_ACTIONS = frozenset({"cycle_mode", "toggle_side", "toggle_diff", "new_session", "focus_timeline",
                                     "show_keys", "stop"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Layout keys belong to the main screen: on a dialog they fall through to its own keys."""
        if action in self.MAIN_SCREEN_ACTIONS and len(self.screen_stack) > 1:
            return False
        if action == "cycle_mode" and self.screen.query("#approval:focus-within"):
            return False  # Shift+Tab is the approval's previous file
        return True

    def action_cycle_mode(self) -> None:
        self.set_mode(MODES[(MODES.index(self.mode) + 1) % len(MODES)])

    def set_mode(self, mode: str) -> None:
        driver = self.bridge.driver
        if driver is not None and mode != driver.mode:
            driver.set_mode(mode)  # the session's mode: a refusal is said in the chat
        self.mode = mode
        self.bridge.set_mode(mode)
        self.query_one(StatusBar).set_mode(mode)

    def action_stop(self) -> None:
        if self.bridge.running or self.bridge.waiting:
            self.bridge.stop()
            self.query_one(Transcript).stop_answer()
            self.query_one(StatusBar).set_state("stopping")
        if self.query_one("#side").has_focus_within:
            self.focus_prompt()
        else:
            from tui.rewind import double_escape

            double_escape(self)  # Esc Esc on an empty, idle prompt opens /rewind

    def focus_prompt(self) -> None:
        """Back to the prompt; in a narrow terminal the side panel gives the column back to the chat."""
        self.screen.remove_class("-side-open")
        self.query_one("#prompt").focus()

    def action_interrupt(self) -> None:
        from tui.quitflow import interrupt

        interrupt(self)

    def action_quit(self) -> None:  # type: ignore[override]
        self.run_worker(later(self.confirm_quit), name="quit", group="quit", exclusive=True, exit_on_error=False)

    async def confirm_quit(self) -> None:
        from tui.quitflow import confirm_quit

        await confirm_quit(self)

    def action_toggle_side(self) -> None:
        self.screen.toggle_class("-side-open" if self.screen.has_class("-narrow") else "-side-closed")

    def action_toggle_diff(self) -> None:
        self.live_diff().toggle()

    def action_focus_timeline(self) -> None:
        from tui.widgets.timeline import Timeline

        timeline = self.query_one("#timeline", Timeline)
        if self.screen.has_class("-narrow"):
            self.screen.add_class("-side-open")
        timeline.action_move(-1)

    def action_show_keys(self) -> None:
        from tui.screens.keys import KeysScreen

        self.push_screen(KeysScreen())

    def action_ask_model(self) -> None:
        from tui.prompting import ask_model

        self.run_worker(ask_model(self), name="model", group="commands", exit_on_error=False)

    def action_new_session(self) -> None:
        from tui.prompting import run_command

        run_command(self, "/clear")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        from tui.commands import palette_commands

        yield from super().get_system_commands(screen)
        yield from palette_commands(self)

    async def load_user_themes(self) -> None:
        """The user's theme files (validated off the event loop), then the theme asked for."""
        from tui.themes import apply_user_themes

        for warning in await apply_user_themes(self, self.wanted_theme):
            self.query_one(Transcript).notice(warning, "warning")
        self._remember_theme = True

    def watch_theme(self, name: str) -> None:
        if self._remember_theme:
            from tui.themes import remember_theme

            remember_theme(self, name)

    # -- internals ------------------------------------------------------------------------
    def show_event(self, event: Event) -> None:
        """An agent event for the chat, the timeline and the status bar (dropped before they exist)."""
        self.notifier.event(event)
        if self.presenter is None:
            return
        with in_context(self):  # events come from the agent's tasks and callbacks
            try:
                self.presenter.handle(event)
            except Exception as exc:  # noqa: BLE001 - a display bug must not end the user's session
                from tui.errors import record

                where = record(exc)
                self.query_one(Transcript).notice(f"could not show a {event.type} event ({exc}); details in {where}",
                                                  "error")

    def on_app_blur(self, event: events.AppBlur) -> None:
        self.notifier.focused = False

    def on_app_focus(self, event: events.AppFocus) -> None:
        self.notifier.focused = True

    def _tick(self) -> None:
        if self.presenter is not None:
            self.presenter.tick()

    def key_argument(self, tool: str, args: dict[str, Any]) -> str:
        session = self.bridge.session
        found = session.registry.get(tool) if session is not None else None
        if found is None and self.bridge.driver is not None:  # the tools are the host's: the usual argument
            from tui.rebuild import key_argument

            return key_argument(args)
        return found.key_argument(args) if found is not None else ""

    def _target_label(self) -> str:
        if self.options.room:
            return f"room {self.options.room}"
        if self.options.github:
            return f"github:{self.options.github}"
        return home_relative(Path(self.options.workspace).expanduser().resolve())

    @work(thread=True, name="list-files", group="files", exit_on_error=False)
    def load_files(self) -> None:
        from tui.startup import list_files

        list_files(self)


def run_app(options: Namespace) -> int:
    app = CoderApp(options)
    result = app.run()
    return result or 0
