"""`coder-tui run`: the agent without a UI. Readable streaming output, or one JSON event per line.

Approvals (ask mode) are answered on stdin with JSON decision lines or the shorthands
y / a / n [feedback] / s (in JSON mode too). When stdin closes, pending and later approvals are denied
with a message saying why; answers that come before their approval are kept and used in order.
A `--github` run that completed publishes its edits as one commit on its work branch at the end
(a `published` event says where; `--no-publish` keeps them in the session). Exit codes: 0
completed, 1 the run failed or was stopped (or publishing failed), 2 usage or configuration
errors, 3 an approval was denied because stdin closed before anyone answered it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any

from agent.client.commands import Note, Prompt
from agent.events import Complete, ErrorEvent, WarningEvent
from agent.frontends.common import UsageError, build_config, handle_ctrl_c, open_or_usage, run_command
from agent.frontends.printing import RunJsonPrinter, TextPrinter
from agent.frontends.stdin import StdinApprover, verdict
from agent.session.notes import resume_notes
from agent.textsafe import visible
from agent.session.ports import SessionOptions

if TYPE_CHECKING:
    from agent.client.local import LocalHandle
    from agent.session.core import AgentSession
    from agent.session.target import Target



def _printer(options: SessionOptions) -> Any:
    if options.json_format == "seed":
        from agent.frontends.seedevents import SeedPrinter

        return SeedPrinter(sys.stdout)
    return RunJsonPrinter(sys.stdout) if options.json else TextPrinter(sys.stdout, sys.stderr)


async def run_headless(options: SessionOptions) -> int:
    """Run one prompt headless; returns the exit code."""
    printer = _printer(options)
    images = _images(options)  # a bad --image is refused before anything is copied or opened
    options = _forked(options, printer)
    target = await _open(options, printer)
    if not target.prompt.strip() and not options.resume:
        await target.close()
        raise UsageError("PROMPT is required (or --issue N with --github, or --resume to continue a plan)")
    config = build_config(options, target.workspace.root)
    await _refuse_unknown_command(target, config.workspace_trusted)
    await _check_model(config)
    if options.verbose:
        from agent.llm.routing import route

        path = route(config.require_model(), config.api_base, config.model_path)
        print(f"coder-tui: model {config.model}: {path.describe()}", file=sys.stderr, flush=True)
    run = _Run(printer)
    handle = await _open_handle(target, config, options, run)
    run.bind(handle)
    prompt = await _prompt_for(handle, target.prompt)
    await _check_images(handle, images)
    return await run.drive(options, prompt, images, github=target.github is not None)


class _Run:
    """`run` in this process: one LocalHandle driven to the end of its prompt's turn, its events
    printed, approvals and plan decisions answered from stdin (StdinApprover, the session's port)."""

    def __init__(self, printer: Any) -> None:
        self.printer = printer
        self.approver = StdinApprover(emit=self.emit, shorthand=True)
        self.handle: LocalHandle | None = None
        self.misconfigured = False
        self.complete: Complete | None = None
        self.failure = ""

    def bind(self, handle: LocalHandle) -> None:
        self.handle = handle  # its items reach self.item from the opening on (_open_handle)

    def emit(self, event: Any) -> None:
        if self.handle is not None:
            self.handle.session.emit(event)

    async def drive(self, options: SessionOptions, prompt: str, images: list[Any], github: bool) -> int:
        """The prompt's turn (or --until's rounds) to its end; the exit code."""
        assert self.handle is not None
        handle, session = self.handle, self.handle.session
        for note in resume_notes(session):
            session.emit(WarningEvent(message=note))
        loop = asyncio.get_running_loop()
        self.approver.start(loop)
        _install_interrupt(loop, handle, self.printer)
        try:
            if options.until:  # a goal: rounds until the check passes (agent/subagents/goal.py)
                from agent.subagents.goal import pursue

                complete = await pursue(session, prompt, options.until, options.max_rounds, images)
            elif (turn := await self.turn(handle, Prompt(prompt, images=tuple(options.images)))) is None:
                print(f"coder-tui: error: {visible(self.failure)}", file=sys.stderr)  # the turn raised
                return 1
            else:
                complete = turn
            published = await _publish(options, session, complete) if github else True
        finally:
            await handle.close()
            _say_lost(session)
        code = 2  # an unknown model or provider, no key: the configuration, not the run, failed
        if not self.misconfigured:  # the verdict's error before the summary, and the summary says the verdict
            code, complete = verdict(complete, self.approver, published, self.printer)
        self.printer.summary(complete, session.totals, session.session_id)
        return code

    def item(self, item: object) -> None:
        if isinstance(item, Note):
            return  # turn_started, turn_done: one turn, nobody else's; `run` prints events only
        self.approver.note_request(item)
        if isinstance(item, ErrorEvent) and item.configuration:
            self.misconfigured = True
        if isinstance(item, Complete):
            self.complete = item
        self.printer.handle(item)

    async def turn(self, handle: LocalHandle, prompt: Prompt) -> Complete | None:
        """The Complete of the prompt's turn (None: it raised; `failure` says why)."""
        reply = await handle.submit(prompt)
        if self.complete is None:
            self.failure = str(reply.error or reply.data.get("error") or "the run ended without completing")
        return self.complete


def _say_lost(session: AgentSession) -> None:
    if session.writer.lost:
        print(f"coder-tui: error: {session.writer.lost} line(s) of session {session.session_id} could not be "
              f"written ({session.writer.failure}); the record ends before them", file=sys.stderr)


async def _open_handle(target: Target, config: Any, options: SessionOptions, run: _Run) -> LocalHandle:
    """The session in this process, its items printed from the opening on (what the opening warns
    of included); a UsageError for a --resume or --agent that does not open."""
    from agent.client.local import LocalHandle
    from agent.profiles import ProfileError
    from agent.session.record import SessionError

    try:
        return LocalHandle.open(target, config, name=f"run (pid {os.getpid()})", resume=options.resume,
                                approver=run.approver, listener=run.item)
    except SessionError as exc:
        await target.close()
        raise UsageError(f"--resume: {exc}") from None
    except ProfileError as exc:
        await target.close()
        raise UsageError(str(exc)) from None


def _forked(options: SessionOptions, printer: Any) -> SessionOptions:
    """With --fork ID: the options resuming a new copy of that session (the original is only read)."""
    from agent.session.fork import fork
    from agent.session.record import SessionError, SessionStore

    if options.fork is None:
        return options
    if options.resume:
        raise UsageError("--fork and --resume cannot be combined (--fork resumes a copy)")
    try:
        new_id = fork(SessionStore(), options.fork)
    except SessionError as exc:
        raise UsageError(f"--fork: {exc}") from None
    printer.notice(f"forked session {options.fork} as {new_id}; the original is left as it was")
    return options.model_copy(update={"resume": new_id, "fork": None})


def _images(options: SessionOptions) -> list[Any]:
    """The --image files, read and checked (a UsageError naming the file and what is wrong)."""
    from pathlib import Path

    from agent.images import ImageError, from_path

    try:
        return [from_path(Path(path), path) for path in options.images]
    except ImageError as exc:
        raise UsageError(f"--image {exc}") from None


async def _check_images(handle: LocalHandle, images: list[Any]) -> None:
    from agent.images import ImageError

    if not images:
        return
    try:
        handle.session.check_images()
    except ImageError as exc:
        await handle.close()
        raise UsageError(str(exc)) from None


async def _prompt_for(handle: LocalHandle, prompt: str) -> str:
    """The prompt; none continues the resumed session's unfinished plan (a UsageError without one)."""
    if not prompt.strip() and handle.session.unfinished_plan is None:
        await handle.close()
        raise UsageError("PROMPT is required: the resumed session has no unfinished plan to continue")
    return prompt


async def _refuse_unknown_command(target: Target, trusted: bool) -> None:
    """`/name args` that names no command is refused, as the app refuses it, before the model loads."""
    from agent.custom.commands import load_commands, user_folders

    commands = await asyncio.to_thread(load_commands, target.workspace.root, trusted, user_folders())
    if (problem := commands.unknown(target.prompt)) is not None:
        await target.close()
        raise UsageError(problem)


async def _check_model(config: Any) -> None:
    """An unknown provider is a configuration error, found before the run starts (exit 2). On the
    litellm path the check is the run's first wait for litellm: a terminal is told while it loads
    (a model the built-in clients serve needs no check and no litellm)."""
    from agent.frontends.waitline import LOADING, said_while_waiting
    from agent.llm import configuration_problem
    from agent.llm.routing import needs_litellm

    if not needs_litellm(config.model, config.api_base, config.model_path):
        return
    async with said_while_waiting(sys.stderr, LOADING):
        problem = await configuration_problem(config.model, config.api_base, config.model_path)
    if problem is not None:
        raise UsageError(f"{problem}; the model is set by: {config.sources.get('model', 'the configuration')}")


async def _publish(options: SessionOptions, session: AgentSession, complete: Any) -> bool:
    """A GitHub run's edits, published as one commit on the work branch (False: that failed)."""
    from agent.github.errors import GitHubError
    from agent.session.github import publish_changes, unpublished

    files = unpublished(session.workspace)
    if not files:
        return True
    keep = (f"{len(files)} changed file{'s' if len(files) != 1 else ''} kept unpublished in session "
            f"{session.session_id}: continue with --resume {session.session_id}, or /pr in the app")
    if getattr(options, "no_publish", False) or not complete.success:
        why = "--no-publish" if getattr(options, "no_publish", False) else "the run did not complete"
        session.emit(ErrorEvent(message=f"not published ({why}); {keep}", recoverable=True))
        return True
    try:
        session.emit(await publish_changes(session.workspace))
    except GitHubError as exc:
        session.emit(ErrorEvent(message=f"publishing failed: {exc}; {keep}", recoverable=False))
        return False
    return True


async def _open(options: SessionOptions, printer: Any) -> Target:
    """The opened target: --github's repository, or the local folder (UsageError when it cannot open)."""
    from agent.session.target import TargetSpec

    spec = TargetSpec.from_options(options)
    if getattr(options, "no_publish", False) and not (spec.github or spec.clone or spec.issue is not None):
        raise UsageError("--no-publish needs --github OWNER/REPO (a local folder's edits are written in place)")
    config = build_config(options, None) if spec.github else None
    return await open_or_usage(spec, config, emit=printer.handle, notice=printer.notice)


def _install_interrupt(loop: asyncio.AbstractEventLoop, handle: LocalHandle, printer: Any) -> None:
    presses = {"count": 0}

    def on_interrupt() -> None:
        presses["count"] += 1
        if presses["count"] == 1 and handle.stop(handle.name).data["stopped"]:
            printer.notice("stopping… (press Ctrl+C again to quit at once)")
            return
        os._exit(130)

    handle_ctrl_c(loop, on_interrupt)


def main(args: Any) -> int:
    """`coder-tui run` with its parsed arguments."""
    return run_command(run_headless, SessionOptions.from_args(args))
