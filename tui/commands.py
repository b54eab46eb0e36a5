"""Slash commands typed in the prompt, and the same actions in the command palette (Ctrl+P)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from textual.app import SystemCommand

from tui.goalcmd import goal_command
from tui.livecmd import live_command
from tui.reasoning_cmd import reasoning_command
from tui.repocmd import repo_command
from tui.widgets.statusbar import MODES, StatusBar
from tui.widgets.timeline import Timeline
from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from agent.config import Workflow
    from agent.session.core import AgentSession
    from tui.app import CoderApp

SLASH_COMMANDS: list[tuple[str, str]] = [
    ("mode", "plan | ask | allow: how much the agent may do without asking"),
    ("model", "MODEL: switch the model (a litellm model string)"),
    ("reasoning", "[off | low | medium | high]: how hard the model thinks before it answers"),
    ("plan", "[TASK | continue | auto | direct | structured]: plan TASK step by step, continue the "
             "unfinished plan, or choose when requests are planned"),
    ("live", "which session needs you: live sessions and their subagents, working, waiting (on what), done"),
    ("goal", "[--rounds N] CMD: keep working until the check command CMD passes (at most N rounds, default 10)"),
    ("profile", "[NAME]: the agent profile (coder, reviewer, architect, ask, or your own)"),
    ("compact", "summarise the older turns now to free the context window"),
    ("undo", "[CHECKPOINT]: restore the workspace to the last (or a given) checkpoint"),
    ("rewind", "go back to an earlier prompt: the conversation, the files, or both (Esc Esc)"),
    ("fork", "continue a copy of this session; the original stays as it was"),
    ("clear", "start a new conversation"),
    ("sessions", "pick a recorded session to continue"),
    ("attach", "[ID]: switch to a session in the session host (a picker of live and recent ones without ID)"),
    ("resume", "ID | last: continue a recorded session"),
    ("allowances", "[revoke TOOL | revoke all]: tools allowed for this session; revoked ones ask again"),
    ("permissions", "[allow|ask|deny RULE [--workspace] | remove RULE]: the lasting permission rules"),
    ("theme", "[NAME]: switch colours (dark, light, high-contrast, …)"),
    ("repo", "[OWNER/REPO[@REF]]: GitHub: the repository the session works on, or switch to another"),
    ("pr", "[TITLE]: GitHub: publish the changes as one commit and open a pull request"),
    ("map", "[QUERY]: show (or search) the codebase map in the side panel; again hides it"),
    ("explore", "start [SECONDS] | stop | status: learn the repository step by step in the background"),
    ("setup", "choose the model, server and key again"),
    ("memory", "[N]: the instruction files loaded (AGENTS.md, CLAUDE.md, imports); N opens one in $EDITOR"),
    ("help", "[TOOL]: commands and keys, or what a tool does, its parameters and examples"),
    ("quit", "leave coder-tui"),
]
Handler = Callable[["CoderApp", str], Awaitable[None]]


def _say(app: CoderApp, text: str, kind: str = "info") -> None:
    app.query_one(Transcript).notice(text, kind)


def _idle(app: CoderApp, what: str) -> AgentSession | None:
    """The session, when it exists and no run is going on; otherwise None, and why not is shown."""
    if app.bridge.running:
        _say(app, f"{what} waits until the agent is idle: press Esc to stop the run first.", "warning")
        return None
    if app.bridge.session is None and (remote := app.bridge.driver) is not None:
        _say(app, f"{what} works on an in-process session; this app is attached to session {remote.session_id} "
                  "in the session host (/attach switches to another).", "warning")
        return None
    if app.bridge.session is None:
        _say(app, f"{what} needs the agent to be ready; it is still loading or could not start.", "warning")
        return None
    return app.bridge.session


async def run_command(app: CoderApp, text: str) -> None:
    name, _, arg = text[1:].partition(" ")
    handler = HANDLERS.get(name.lower())
    if handler is None and name in dict(custom_commands(app)):
        app.send_prompt(text)  # the session expands it (agent/custom/commands.py)
        return
    if handler is None:
        _say(app, f"unknown command /{name}; /help lists the commands", "error")
        return
    await handler(app, arg.strip())


async def _mode(app: CoderApp, arg: str) -> None:
    if arg not in MODES:
        _say(app, f"mode is {app.mode}; use /mode plan, /mode ask or /mode allow (Shift+Tab cycles)",
             "warning" if arg else "info")
        return
    app.set_mode(arg)


async def _model(app: CoderApp, arg: str) -> None:
    session = app.bridge.session
    if not arg:
        current = session.model if session is not None else app.options.model
        path = ""
        if current and session is not None:
            from agent.llm.routing import route

            path = f", through the {route(current, session.config.api_base, session.config.model_path).describe()}"
        _say(app, f"model: {current or 'none'}{path}; /model MODEL switches (e.g. /model anthropic/claude-sonnet-4-5)")
        return
    if session is None:
        _say(app, "the agent is not ready yet; try again in a moment", "warning")
        return
    from agent.llm import configuration_problem

    # A typo'd provider (opnai/…) is refused here, not at the next request (whose setup screen
    # would save it).
    if problem := await configuration_problem(arg, session.config.api_base, session.config.model_path):
        _say(app, f"/model: {problem}; the model stays {session.model}", "error")
        return
    app.bridge.set_model(arg)
    app.show_model(arg)
    later = " from the next request" if app.bridge.running else ""
    _say(app, f"model: {arg}{later} (this session; set `model` in the config file to keep it)")


async def _profile(app: CoderApp, arg: str) -> None:
    from agent.profiles import ProfileError

    session = app.bridge.session
    if session is None:
        _say(app, "the agent is not ready yet; try again in a moment", "warning")
        return
    if not arg:
        names = ", ".join(sorted(session.agent.profiles.profiles))
        _say(app, f"profile: {session.agent.profile.name}; /profile NAME switches ({names})")
        return
    if not _idle(app, "/profile"):
        return
    try:
        profile = session.agent.use_profile(arg)
    except ProfileError as exc:
        _say(app, str(exc), "error")
        return
    if profile.mode:
        app.set_mode(profile.mode)
    if app.config is not None:  # loaded with the session: a new conversation (/clear) keeps the profile
        app.config.profile = profile.name
    app.query_one("#status", StatusBar).set_profile(profile.name)
    _say(app, f"profile: {profile.name} ({profile.description or profile.agent}) from the next request")


async def _compact(app: CoderApp, arg: str) -> None:
    session = _idle(app, "/compact")
    if session is None:
        return
    from agent.llm import LLMError

    _say(app, "Summarising the older turns…", "dim")
    try:
        event = await session.agent.compact_now()
    except LLMError as exc:
        _say(app, f"/compact: {exc}", "error")
        return
    if event is None:
        _say(app, "Nothing to compact yet: the conversation is only a few turns long.")
        return
    from agent.compaction import describe

    _say(app, describe(event), "success")
    if event.summary:
        _say(app, f"The summary:\n{event.summary}", "dim")


async def _undo(app: CoderApp, arg: str) -> None:
    if _idle(app, "/undo"):
        await restore_checkpoint(app, arg or None, "", confirm=False)


async def restore_checkpoint(app: CoderApp, ref: str | None, label: str, confirm: bool) -> None:
    from agent.checkpoints import CheckpointError

    session = _idle(app, "Restoring a checkpoint")
    if session is None:
        return
    if confirm:
        from tui.screens.confirm import ConfirmScreen

        question = (f"Roll the workspace back to checkpoint {ref[:7] if ref else ''}{f' ({label})' if label else ''}?\n"
                    "The files as they are now are saved as a checkpoint first, so this can be undone.")
        if not await app.push_screen_wait(ConfirmScreen(question, "Restore")):
            return
    try:
        include = await _ask_untouched(app, session, ref)
        restored, saved = await app.bridge.undo(ref, include)
    except CheckpointError as exc:
        _say(app, str(exc), "error")
        return
    _say(app, f"Restored checkpoint {restored.id} ({restored.label}). The state before it is checkpoint "
              f"{saved.id}: /undo {saved.id} goes back.", "success")
    from agent.events import CheckpointEvent

    # Through the session: on the timeline now, and in the session file for a resumed session's replay.
    session.emit(CheckpointEvent(id=saved.id, label=saved.label, restored=restored.id))
    app.refresh_pane()


async def _ask_untouched(app: CoderApp, session: AgentSession, ref: str | None) -> bool:
    """Whether the restore also takes back files the agent never touched (the user says, seeing them)."""
    if session.checkpoints is None:
        return False
    untouched = await asyncio.to_thread(session.checkpoints.untouched, ref)
    if not untouched:
        return False
    from tui.screens.confirm import ConfirmScreen

    names = "\n".join(f"  {path}" for path in untouched[:12])
    more = f"\n  … and {len(untouched) - 12} more" if len(untouched) > 12 else ""
    question = (f"Undo puts back what the agent changed. These files changed too, but not by the agent:\n"
                f"{names}{more}\nRestore them as well? Files you made are deleted, your edits undone.")
    # Enter, n and Escape keep them: losing the user's work takes the explicit y
    answer: bool = await app.push_screen_wait(ConfirmScreen(question, "Restore them too", "Keep them", default=False))
    return bool(answer)  # None when the screen closed without an answer


async def _clear(app: CoderApp, arg: str) -> None:
    if _idle(app, "/clear"):
        await switch_session(app, None)


async def switch_session(app: CoderApp, resume: str | None) -> None:
    """Start a new conversation, or continue a recorded one, in this workspace."""
    from agent.session.record import SessionError

    assert app.config is not None, "the config loads before the first session opens"
    try:
        session = await app.bridge.new_session(app.config, resume)
    except SessionError as exc:
        _say(app, str(exc), "error")
        return
    app.query_one(Transcript).clear()
    app.query_one(Timeline).clear()
    app.query_one("#status", StatusBar).set_usage(0, 0, None)
    app.query_one("#status", StatusBar).set_allowances([])  # a new gate: nothing is allowed in the new session
    app.session_opened(session)  # the new session answers a room's next triggers (open_session binds it)
    if resume is None:
        _say(app, f"New conversation (session {session.session_id}).", "dim")


async def _sessions(app: CoderApp, arg: str) -> None:
    session = _idle(app, "/sessions")
    if session is None:
        return
    from tui.screens.sessions import SessionsScreen

    chosen = await app.push_screen_wait(SessionsScreen(session.workspace.label, session.session_id))
    if chosen:
        await switch_session(app, chosen)


async def _resume(app: CoderApp, arg: str) -> None:
    if _idle(app, "/resume"):
        await switch_session(app, arg or "last")


async def _allowances(app: CoderApp, arg: str) -> None:
    """List the tools allowed for this session, or revoke one (or all): the gate asks again."""
    session = app.bridge.session
    if session is None:
        _say(app, "the agent is not ready yet; nothing is allowed", "warning")
        return
    gate = session.gate
    verb, _, tool = arg.partition(" ")
    if verb == "revoke":
        tool = tool.strip()
        revoked = gate.revoke(None if tool in ("", "all") else tool)
        status = app.query_one("#status", StatusBar)
        status.set_allowances([t for t in status.allowances if t in gate.allowed_tools])
        if revoked:
            _say(app, f"Revoked: {', '.join(revoked)} ask{'s' if len(revoked) == 1 else ''} again before "
                      "running.", "success")
        elif tool in ("", "all"):
            _say(app, "No tool is allowed for this session; nothing to revoke", "warning")
        else:
            others = ", ".join(sorted(gate.allowed_tools)) or "none"
            _say(app, f"{tool} was not allowed for this session (allowed: {others}); nothing to revoke", "warning")
        return
    if arg:
        _say(app, "use /allowances, /allowances revoke TOOL or /allowances revoke all", "warning")
        return
    allowed = sorted(gate.allowed_tools)
    if not allowed:
        _say(app, "No tool is allowed for this session: in ask mode every edit, command and web request asks "
                  "first.")
        return
    _say(app, f"Allowed for this session without asking: {', '.join(allowed)}. /allowances revoke TOOL "
              "(or revoke all) makes them ask again.")


async def _permissions(app: CoderApp, arg: str) -> None:
    from agent.permissions import store

    session = app.bridge.session
    screen = session.ctx.extras.get("permissions") if session is not None else None
    root = session.workspace.root if session is not None and session.workspace.kind == "local" else None
    text, kind = store.command(getattr(screen, "rules", None), arg, root)
    _say(app, text, kind)


async def _theme(app: CoderApp, arg: str) -> None:
    if not arg:
        app.search_themes()
        return
    if arg not in app.available_themes:
        names = ", ".join(sorted(app.available_themes))
        _say(app, f"no theme {arg!r}; available: {names}", "error")
        return
    app.theme = arg


async def _pr(app: CoderApp, arg: str) -> None:
    session = _idle(app, "/pr")
    if session is None:
        return
    from agent.github.errors import GitHubError
    from agent.session.github import open_pr

    _say(app, "Publishing the changes and opening the pull request…", "dim")
    try:
        info = await open_pr(session.workspace, title=arg or None)
    except GitHubError as exc:
        _say(app, f"/pr: {exc}", "error")
        return
    _say(app, f"Pull request #{info.number}: {info.url}", "success")
    app.refresh_pane()


async def _setup(app: CoderApp, arg: str) -> None:
    if app.bridge.running:
        _say(app, "/setup waits until the agent is idle: press Esc to stop the run first.", "warning")
        return
    from tui.boot import apply_setup

    await apply_setup(app)


async def _help(app: CoderApp, arg: str) -> None:
    if not arg.strip():
        app.action_show_keys()
        return
    from agent.tools.registry import describe_tool

    session = app.bridge.session
    registry = session.registry if session is not None else None
    tool = registry.get(arg.strip()) if registry is not None else None
    if tool is None:
        names = ", ".join(sorted(registry.names)) if registry is not None else "none yet (the agent is loading)"
        _say(app, f"no tool {arg.strip()!r}; the tools: {names}", "warning")
        return
    from agent.textsafe import visible

    _say(app, visible(describe_tool(tool)))  # an MCP server writes its tools' descriptions


async def _quit(app: CoderApp, arg: str) -> None:
    await app.confirm_quit()


WORKFLOWS = {"auto": "new tasks that need several steps are planned; the rest runs directly",
             "direct": "every request runs as one agent loop",
             "structured": "every task is planned, then run step by step"}


async def _plan(app: CoderApp, arg: str) -> None:
    """The structured workflow (agent/planning): its setting, continuing a plan, planning a task."""
    session = app.bridge.session
    if arg.lower() in WORKFLOWS:
        if session is not None:
            session.workflow = cast("Workflow", arg.lower())
        app.options.workflow = arg.lower()  # kept for sessions opened later (/clear, /resume)
        _say(app, f"workflow: {arg.lower()}: {WORKFLOWS[arg.lower()]}")
        return
    if not arg:
        current = session.workflow if session is not None else (getattr(app.options, "workflow", None) or "direct")
        _say(app, f"workflow is {current}: {WORKFLOWS[current]}. /plan TASK plans one task; "
                  "/plan auto | direct | structured changes it; /plan continue resumes an unfinished plan")
        return
    session = _idle(app, "/plan")
    if session is None:
        return
    if arg.lower() == "continue":
        if session.unfinished_plan is None:
            _say(app, "there is no unfinished plan in this session", "warning")
            return
        _say(app, f"Continuing the plan at: {session.unfinished_plan.current().title}", "dim")
        presenter = getattr(app, "presenter", None)
        if presenter is not None:
            presenter.title = "continue the plan"
        app.bridge.submit("", [])
        return
    session.plan_next = True
    app.send_prompt(arg)


async def _map(app: CoderApp, arg: str) -> None:
    from tui.knowledge import toggle_map

    await toggle_map(app, arg)


async def _explore(app: CoderApp, arg: str) -> None:
    from tui.knowledge import explore_command

    await explore_command(app, arg)


async def _memory(app: CoderApp, arg: str) -> None:
    from tui.memory import memory_command

    await memory_command(app, arg)


async def _rewind(app: CoderApp, arg: str) -> None:
    from tui.rewind import rewind_command

    await rewind_command(app, arg)


async def _fork(app: CoderApp, arg: str) -> None:
    from tui.rewind import fork_command

    await fork_command(app, arg)


async def _attach(app: CoderApp, arg: str) -> None:
    from tui.attaching import attach_command

    await attach_command(app, arg)


HANDLERS: dict[str, Handler] = {
    "plan": _plan, "goal": goal_command, "live": live_command,
    "mode": _mode, "model": _model, "profile": _profile, "compact": _compact, "undo": _undo,
    "allowances": _allowances, "clear": _clear, "new": _clear, "sessions": _sessions, "resume": _resume,
    "theme": _theme, "pr": _pr, "setup": _setup, "help": _help, "quit": _quit, "exit": _quit,
    "map": _map, "explore": _explore, "memory": _memory, "reasoning": reasoning_command, "rewind": _rewind,
    "fork": _fork, "permissions": _permissions, "repo": repo_command, "attach": _attach,
}


def custom_commands(app: CoderApp) -> list[tuple[str, str]]:
    """The session's custom commands (name, description) for completion, /help and the palette."""
    bridge = getattr(app, "bridge", None)  # the keys screen is shown by other apps too (its tests)
    session = bridge.session if bridge is not None else None
    found = getattr(getattr(session, "agent", None), "input", None)
    return found.commands.listing() if found is not None and found.commands is not None else []


def palette_commands(app: CoderApp) -> Iterable[SystemCommand]:
    """The app's actions for the command palette (Textual adds theme, keys, quit, screenshot)."""

    def command(text: str) -> Callable[[], object]:
        return lambda: app.run_worker(run_command(app, text), group="commands", exit_on_error=False)

    for mode in MODES:
        yield SystemCommand(f"Mode: {mode}", f"Switch to {mode} mode (Shift+Tab cycles)", command(f"/mode {mode}"))
    yield SystemCommand("Model…", "Switch the model for this session", app.action_ask_model)
    yield SystemCommand("Undo", "Restore the workspace to the last checkpoint", command("/undo"))
    yield SystemCommand("Rewind…", "Go back to an earlier prompt (Esc Esc)", command("/rewind"))
    yield SystemCommand("Fork", "Continue a copy of this session", command("/fork"))
    yield SystemCommand("Allowances", "Tools allowed for this session without asking", command("/allowances"))
    session = app.bridge.session
    for tool in sorted(session.gate.allowed_tools if session is not None else ()):
        yield SystemCommand(f"Revoke: allow {tool} for this session", f"{tool} asks again before it runs",
                            command(f"/allowances revoke {tool}"))
    yield SystemCommand("Sessions…", "Continue a recorded session", command("/sessions"))
    yield SystemCommand("New session", "Start a new conversation (Ctrl+N)", command("/clear"))
    yield SystemCommand("Side panel", "Show or hide the plan and workspace panel (Ctrl+B)", app.action_toggle_side)
    yield SystemCommand("Setup…", "Choose the model, server and key again", command("/setup"))
    for name, description in custom_commands(app):
        yield SystemCommand(f"/{name}", description, command(f"/{name}"))
    if app.bridge.on_github:
        yield SystemCommand("Pull request", "Publish the changes as one commit and open a PR", command("/pr"))
