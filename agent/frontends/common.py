"""What the command-line front ends share: usage errors, the config from their flags, opening
their target with its failure as a usage error."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from argparse import Namespace

    from agent.config import Config
    from agent.session.ports import SessionOptions

Options = TypeVar("Options")  # what the command line gave the front end (SessionOptions or a namespace)

from agent.textsafe import visible


class UsageError(Exception):
    """Bad flags or configuration: exit code 2 with a one-line message."""


def build_config(options: SessionOptions | Namespace, workspace_root: Path | None,
                 environ: dict[str, str] | None = None) -> Config:
    from agent.config import ConfigError, load_config
    from agent.workspace_input.trust import trust_folder

    flags = {"model": options.model, "api_base": options.api_base, "api_key": options.api_key,
             "mode": options.mode, "max_steps": options.max_steps, "sandbox": getattr(options, "sandbox", None),
             "profile": getattr(options, "profile", None),
             "max_cost": getattr(options, "max_cost", None), "max_tokens": getattr(options, "max_tokens", None),
             "workflow": getattr(options, "workflow", None), "reasoning": getattr(options, "reasoning", None)}
    trust = bool(getattr(options, "trust", False)) and workspace_root is not None
    try:
        if trust:
            trust_folder(workspace_root)
        config = load_config(workspace_root, flags, environ=environ, trust=trust)
        config.require_model()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return config



async def open_or_usage(spec: Any, config: Any = None, **callbacks: Any) -> Any:
    """`open_target(spec, config, **callbacks)`, its failure a UsageError with what failed."""
    from agent.session.target import TargetError, open_target

    try:
        return await open_target(spec, config, **callbacks)
    except TargetError as exc:
        raise UsageError(exc.message) from None


def run_command(run: Callable[[Options], Coroutine[Any, Any, int]], options: Options, name: str = "coder-tui") -> int:
    """A front end's async entry run to its exit code; a usage error is one line and exit 2."""
    try:
        return asyncio.run(run(options))
    except UsageError as exc:
        print(f"{name}: error: {visible(str(exc))}", file=sys.stderr)
        return 2


def handle_ctrl_c(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> None:
    """Ctrl+C and SIGTERM (a service manager, `kill`, a closing terminal's job control) call
    handler, so both end the same clean way (where the loop can take signals: not off the main
    thread)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, handler)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            pass


class TurnText:
    """A run's streamed text for a client that shows it as one message: each model turn's text
    after the first is set apart by a blank line, so "…readability:" and "The function…" of two
    turns do not run together. `step()` at each StepStarted, `run()` at each RunStarted."""

    def __init__(self) -> None:
        self._tail = ""  # the end of the text sent in this run ("" before any)
        self._new_turn = False

    def run(self) -> None:
        self._tail, self._new_turn = "", False

    def step(self) -> None:
        self._new_turn = bool(self._tail)

    def text(self, text: str) -> str:
        """The delta to send: `text`, after a separator when it is the first of a later turn."""
        if not text:
            return text
        if self._new_turn:
            self._new_turn = False
            text = ("" if self._tail.endswith("\n\n") else "\n" if self._tail.endswith("\n") else "\n\n") + text
        self._tail = (self._tail + text)[-2:]
        return text

    def block(self, text: str) -> str:
        """`text` as a paragraph of its own (a note between the model's words)."""
        before = "" if not self._tail or self._tail.endswith("\n\n") else "\n" if self._tail.endswith("\n") else "\n\n"
        self._new_turn = False
        self._tail = "\n\n"
        return f"{before}{text}\n\n"
