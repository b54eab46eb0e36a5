"""First-run setup: pick a model (and maybe a key), check that it answers, save it.

Shown when coder-tui starts without a usable model or key (see `needs_setup`), so a missing
configuration becomes a screen that explains the options instead of a crash. The typed key is
registered with `agent.secrets` before anything could echo it, and it is only ever shown masked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input, Label, LoadingIndicator, RadioButton, RadioSet, Static

from agent import paths, secrets
from agent.config import DEFAULT_MODELS, Config, ConfigError, save_user_settings
from agent.llm import LLM, LLMError
from tui.appcontext import later
from tui.pathfmt import home_relative
from tui.screens.setupcheck import (GENERIC_KEY_VAR, MODEL_EXAMPLES, export_variable, found_key_variables,
                                    model_problem, needs_setup, url_problem)

__all__ = ["ConfirmSave", "SetupResult", "SetupScreen", "export_variable", "needs_setup"]
from tui.screens.typeahead import forward, is_typing, typing_target

CHECK_TIMEOUT = 30.0  # a check is one tiny request; a minute-long wait would look like a hang


@dataclass(frozen=True)
class SetupResult:
    """What the user saved. `api_key` lets this session use a key that was deliberately not saved."""

    model: str
    api_base: str | None
    key_saved: bool
    config_path: Path
    api_key: SecretStr | None = None
    key_variable: str | None = None  # the variable to export when the key was not saved


@dataclass(frozen=True)
class _Fields:
    model: str
    api_base: str
    key: str


class ConfirmSave(ModalScreen[bool]):
    """Asks before saving a model that has not answered (its server may just be offline now)."""

    CSS_PATH = "setup.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Save anyway", id="setup.confirm_yes"),
        Binding("n,escape", "answer(False)", "Go back", id="setup.confirm_no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(Content(self._question), id="confirm-question")
            yield Static("Saving is fine if the model server is just offline right now.", id="confirm-note")
            with Horizontal(id="confirm-buttons"):
                yield Button("Save anyway", id="confirm-yes", variant="primary", compact=True)
                yield Button("Go back", id="confirm-no", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#confirm-yes", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class SetupScreen(Screen[SetupResult | None]):
    """Explains the ways to reach a model, checks one, and saves it to the user config."""

    CSS_PATH = "setup.tcss"
    AUTO_FOCUS = ""  # on_mount: the model field, unless the user is still typing a prompt
    # Spacing between the fields only where the rows fit: at 24 rows everything stays on screen.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    BINDINGS = [
        Binding("ctrl+t", "check", "Check connection", id="setup.check"),
        Binding("ctrl+s", "save", "Save", id="setup.save"),
        Binding("ctrl+s", "continue", "Continue", id="setup.continue"),  # replaces Save once saved
        Binding("escape", "quit_setup", "Quit", id="setup.quit"),
    ]

    def __init__(self, config: Config | None = None, environ: Mapping[str, str] | None = None,
                 reason: str | None = None) -> None:
        super().__init__()
        self._config = config or Config()
        self._environ = dict(os.environ) if environ is None else environ
        self._reason = reason or needs_setup(self._config, self._environ)
        self._found = found_key_variables(self._environ)
        self._checked: _Fields | None = None  # the fields of the last check that succeeded
        self._done: SetupResult | None = None  # saved; waiting for the user to read the export line
        self._typing_to: Widget | None = None  # the prompt behind, while the user still types into it

    # -- layout -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="setup-frame"):
            with VerticalScroll(id="setup-body", can_focus=False):
                yield Static("Set up a model", id="setup-title")
                yield Static(self._intro(), id="setup-intro")
                yield Static(self._ways(), id="setup-ways")
                yield from self._inputs()
            # Outside the scrolling part: the outcome of a check and the buttons always stay in view.
            with Vertical(id="setup-actions"):
                with Horizontal(id="setup-status-row"):
                    yield LoadingIndicator(id="setup-spinner")
                    yield Static(id="setup-status")
                yield Static(id="setup-export")
                with Horizontal(id="setup-buttons"):
                    yield Button("Check connection", id="setup-check", variant="primary", compact=True)
                    yield Button("Save", id="setup-save", variant="success", compact=True)
                    yield Button("Quit", id="setup-quit", compact=True)
        yield Footer()

    def _inputs(self) -> ComposeResult:
        yield from self._field("Model", Input(self._initial_model(), id="setup-model", compact=True,
                                              placeholder=f"provider/model, e.g. {MODEL_EXAMPLES}"))
        yield from self._field("API base", Input(self._config.api_base or "", id="setup-api-base",
                                                 compact=True, placeholder="optional: http(s)://host:port"))
        yield from self._field("API key", Input(id="setup-api-key", password=True, compact=True,
                                                placeholder="optional; leave empty to use the environment"))
        with Horizontal(classes="setup-row", id="setup-key-row"):
            yield Label("Key", classes="setup-label")
            with RadioSet(id="setup-key-choice", compact=True):
                yield RadioButton("Save it in config.toml (only you can read it)", value=True,
                                  id="setup-key-save")
                yield RadioButton(self._export_label(self._initial_model(), self._config.api_base),
                                  id="setup-key-export")

    @staticmethod
    def _field(label: str, field: Input) -> ComposeResult:
        with Horizontal(classes="setup-row"):
            yield Label(label, classes="setup-label")
            with Vertical(classes="setup-field"):
                yield field
                yield Static(id=f"{field.id}-error", classes="setup-error")

    def _intro(self) -> Content:
        where = home_relative(paths.user_config_file())
        why = (f"coder-tui needs a model first: {self._reason}." if self._reason
               else "Choose the model coder-tui uses.")
        return Content.from_markup("$why\nYour choice is saved in $where.", why=why, where=where)

    def _ways(self) -> Content:
        if self._found:
            names = ", ".join(f"{var} → {model}" for var, model in self._found)
            env = Content.from_markup("[b]$names[/b]", names=names)
        else:
            sample = ", ".join(var for var, _ in DEFAULT_MODELS[:2])
            env = Content.from_markup("none set now ($sample, …)", sample=sample)
        lines = [
            Content("1 A provider key in the environment: ") + env,
            Content(f"2 A litellm model string and its key: {MODEL_EXAMPLES}"),
            Content("3 An OpenAI-compatible URL: ollama_chat/qwen2.5-coder at http://localhost:11434 "
                    "(no key), or a LiteLLM proxy"),
        ]
        return Content("\n").join(lines)

    def _initial_model(self) -> str:
        if self._config.model:
            return self._config.model
        return next((model for var, model in self._found if "<" not in model), "")

    @staticmethod
    def _export_label(model: str, api_base: str | None) -> str:
        return f"Don't save it; I will export {export_variable(model, api_base)}"

    # -- state ------------------------------------------------------------------------------
    def _fields(self) -> _Fields:
        return _Fields(*(self.query_one(f"#setup-{name}", Input).value.strip()
                         for name in ("model", "api-base", "api-key")))

    def _validate(self) -> bool:
        fields = self._fields()
        problems = {"setup-model": model_problem(fields.model),
                    "setup-api-base": url_problem(fields.api_base)}
        for input_id, problem in problems.items():
            self._show_problem(input_id, problem)
        first = next((input_id for input_id, problem in problems.items() if problem), None)
        if first is not None:
            self.query_one(f"#{first}", Input).focus()
        return first is None

    def _show_problem(self, input_id: str, problem: str | None) -> None:
        self.query_one(f"#{input_id}", Input).set_class(problem is not None, "-invalid")
        error = self.query_one(f"#{input_id}-error", Static)
        error.update(Content(problem or ""))
        error.set_class(problem is not None, "-shown")

    def _set_status(self, text: str, state: str) -> None:
        status = self.query_one("#setup-status", Static)
        status.update(Content(secrets.redact(text)))
        status.set_classes(state)
        self.query_one("#setup-spinner").display = state == "-checking"

    def _usable_key(self, typed: str) -> str | None:
        """The key a check should send; None lets litellm read the provider variable itself."""
        if typed:
            return typed
        if self._config.api_key is not None:
            return self._config.api_key.get_secret_value() or None
        return self._environ.get(GENERIC_KEY_VAR) or None

    # -- events -----------------------------------------------------------------------------
    def on_mount(self) -> None:
        stack = self.app.screen_stack
        self._typing_to = typing_target(stack[-2] if len(stack) > 1 and stack[-1] is self else None)
        if self._typing_to is None:
            self.query_one("#setup-model", Input).focus()
        else:  # the form waits for Tab or a click
            self._set_status("What you type goes to your prompt, sent once a model is set up. "
                             "Tab moves into this form.", "-typing")

    def on_key(self, event: events.Key) -> None:
        if self._typing_to is not None and self.focused is None and is_typing(event):
            forward(event, self._typing_to)

    def on_paste(self, event: events.Paste) -> None:
        if self._typing_to is not None and self.focused is None:
            forward(event, self._typing_to)

    def on_descendant_focus(self) -> None:
        if self._typing_to is not None:
            self._typing_to = None
            self._set_status("", "")

    @on(Input.Submitted, "#setup-model")
    def _model_entered(self) -> None:
        self.query_one("#setup-api-base", Input).focus()

    @on(Input.Submitted, "#setup-api-base")
    def _base_entered(self) -> None:
        self.query_one("#setup-api-key", Input).focus()

    @on(Input.Submitted, "#setup-api-key")
    def _key_entered(self) -> None:
        self.action_check()

    @on(Input.Changed, "#setup-model, #setup-api-base")
    def _edited(self, event: Input.Changed) -> None:
        input_id = event.input.id or ""
        if self.query_one(f"#{input_id}-error").has_class("-shown"):  # re-check only a field marked wrong
            check = model_problem if input_id == "setup-model" else url_problem
            self._show_problem(input_id, check(event.value.strip()))
        fields = self._fields()
        export = self.query_one("#setup-key-export", RadioButton)
        export.label = self._export_label(fields.model, fields.api_base)

    @on(Button.Pressed, "#setup-buttons Button")
    def _pressed(self, event: Button.Pressed) -> None:
        actions = {"setup-check": self.action_check, "setup-save": self.action_save,
                   "setup-quit": self.action_quit_setup}
        actions[event.button.id or ""]()

    # -- actions ----------------------------------------------------------------------------
    def action_quit_setup(self) -> None:
        self.dismiss(None)

    def action_check(self) -> None:
        if self._done is not None or not self._validate():
            return
        fields = self._fields()
        # Registered here and at save, not per keystroke: each prefix would become a masked "secret".
        secrets.register(fields.key)
        self._set_status(f"Checking {fields.model}…", "-checking")
        # exclusive: a second press restarts the check instead of racing the first one
        self.run_worker(later(self._check, fields), group="setup-check", exclusive=True, exit_on_error=False)

    async def _check(self, fields: _Fields) -> None:
        llm = LLM(fields.model, fields.api_base or None, self._usable_key(fields.key), timeout=CHECK_TIMEOUT,
                  max_retries=0, key_variable=Config(model=fields.model).key_variable())
        try:
            reply = await llm.check()
        except LLMError as exc:
            self._set_status(f"✗ {exc}", "-error")
            return
        except Exception as exc:  # noqa: BLE001 - anything else is still shown, not a crash
            self._set_status(f"✗ the check failed: {type(exc).__name__}: {exc}", "-error")
            return
        self._checked = fields
        answer = " ".join(reply.split())[:80] or "(an empty reply)"
        self._set_status(f"✓ {fields.model} answered: {answer}", "-ok")

    def action_continue(self) -> None:
        if self._done is not None:
            self.dismiss(self._done)

    def action_save(self) -> None:
        if self._done is not None:
            self.action_continue()
            return
        if not self._validate():
            return
        fields = self._fields()
        secrets.register(fields.key)
        if fields == self._checked:
            self._save(fields)
            return
        failed = self.query_one("#setup-status", Static).has_class("-error")
        question = (f"The last check of {fields.model} failed." if failed
                    else f"{fields.model} has not answered a check yet.") + " Save it anyway?"
        self.app.push_screen(ConfirmSave(question), lambda yes: self._save(fields) if yes else None)

    def _save(self, fields: _Fields) -> None:
        # Read the "don't save" button: when in doubt, the key stays out of the file.
        save_key = bool(fields.key) and not self.query_one("#setup-key-export", RadioButton).value
        updates: dict[str, str | None] = {"model": fields.model, "api_base": fields.api_base or None}
        if fields.key:  # a key typed but not saved also drops an older saved key: it is stale now
            updates["api_key"] = fields.key if save_key else None
        try:
            path = save_user_settings(updates)
        except (ConfigError, OSError) as exc:
            self._set_status(f"✗ could not save: {exc}", "-error")
            return
        var = export_variable(fields.model, fields.api_base)
        result = SetupResult(model=fields.model, api_base=fields.api_base or None, key_saved=save_key,
                             config_path=path, api_key=SecretStr(fields.key) if fields.key else None,
                             key_variable=None if save_key or not fields.key else var)
        if result.key_variable is None:
            self.dismiss(result)
            return
        self._done = result
        self._show_export(path, var)

    def _show_export(self, path: Path, var: str) -> None:
        """The key stays out of files: say exactly what to export before the next start."""
        self._set_status(f"✓ Saved to {home_relative(path)}, without the key. This session uses the key "
                         "you typed; before you start coder-tui again, run (or add to your shell profile):",
                         "-done")
        export = self.query_one("#setup-export", Static)
        export.update(Content(f"export {var}=<your key>"))
        export.display = True
        for widget in self.query("#setup-body Input, #setup-key-choice"):
            widget.disabled = True
        self.query_one("#setup-check", Button).display = False
        save = self.query_one("#setup-save", Button)
        save.label = "Continue"
        save.focus()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Once saved (and waiting for the user to read the export line) only Continue and Quit apply.
        if action in ("check", "save"):
            return self._done is None
        if action == "continue":
            return self._done is not None
        return True
