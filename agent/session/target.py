"""open_target(): the one place a front end opens what the agent works on.

A target is a local folder, a GitHub repository (through the API, or `--clone` for a worktree of
a cached clone, optionally starting from `--issue N`) or a live OCT room. Every front end (the
app, `coder-tui run`, `coder-tui room`, the servers) describes what to open as a `TargetSpec`,
calls `open_target`, then opens its `AgentSession` on the result (agent.session.open):

    target = await open_target(spec, config, emit=sink, notice=print_line)
    session = open_session(target, config, SessionPorts(approver, sink), resume=spec.resume)
    await session.run(target.prompt)   # (a room: run `target.agent.run()`, which answers triggers)
    ...
    await session.close()
    await target.close()

Failures are one `TargetError` whose message says what failed and whose hint says what to do;
never a traceback. Nothing here prints: progress, notices and events go to the callbacks given.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from agent.workspaces.base import ProgressFn, Workspace

if TYPE_CHECKING:
    from argparse import Namespace

    from agent.session.ports import SessionOptions
    from agent.session.core import AgentSession
    from agent.session.github import OpenedGitHub
    from agent.oct.client import RoomClient
    from agent.oct.login import LoginPrompt
    from agent.session.room import RoomAgent
    from agent.tools.registry import ToolRegistry

DEFAULT_SERVER = "https://api.open-collab.tools/"
RESUME_HINT = "`coder-tui sessions` lists the sessions you can resume"
Emit = Callable[[Any], None]


class TargetError(Exception):
    """What failed (`message`, naming the option at fault) and what to do about it (`hint`).

    `reason` is the cause without the option prefix (for front ends that phrase it their own
    way); `usage` is True when the input was wrong (bad folder, repository, session id) and
    False when a service we reached failed us (a room that would not let us in).
    """

    def __init__(self, message: str, hint: str = "", *, reason: str | None = None, usage: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.reason = reason if reason is not None else message
        self.usage = usage


@dataclass(frozen=True)
class TargetSpec:
    """What to open: a room when `room` is set, else a GitHub repository when `github` is set,
    else the local folder `workspace` (None: the resumed session's folder, or the current one)."""

    workspace: str | None = None
    github: str | None = None  # OWNER/REPO[@REF] or a github.com address
    clone: bool = False
    issue: int | None = None
    prompt: str = ""  # what the user asked; with `issue`, it follows the issue's text
    resume: str | None = None  # a session id, prefix or `last`
    room: str | None = None
    server: str = DEFAULT_SERVER
    name: str = "agent"  # our name in a room (and the @NAME its prompts use)
    email: str | None = None
    approvers: tuple[str, ...] = ()  # room peers who may answer proposals from the chat (`--approver`)
    recorded: bool = False  # `github`/`clone` come from the resumed session's record, not the options

    @classmethod
    def from_options(cls, options: SessionOptions | Namespace) -> TargetSpec:
        """The spec the options (or argparse namespace) of `coder-tui`, `run` or `room` describe."""
        def get(name: str, default: Any = None) -> Any:
            return getattr(options, name, default)

        spec = cls(workspace=get("workspace"), github=get("github"), clone=bool(get("clone", False)),
                   issue=get("issue"), prompt=get("prompt") or "", resume=get("resume"),
                   room=get("room") or get("room_id"), server=get("server") or DEFAULT_SERVER,
                   name=get("name") or "agent", email=get("email"), approvers=tuple(get("approver") or ()))
        return spec.on_recorded_repository()

    def on_recorded_repository(self, store: Any = None) -> TargetSpec:
        """`--resume ID` of a session recorded on GitHub, without `--github`: the repository (and
        clone) it was recorded on, never the local folder (where its files do not exist)."""
        if not self.resume or self.resume == "last" or self.github or self.room:
            return self
        recorded = recorded_repository(self.resume, store)
        if recorded is None:
            return self
        repository, clone = recorded
        return replace(self, github=repository, clone=clone, recorded=True)


@dataclass
class Target:
    """An opened target: its workspace, tools, description, first prompt and what to close."""

    workspace: Workspace
    prompt: str = ""  # the task to run first: the issue's text (with --issue), then the user's prompt
    meta: dict[str, Any] = field(default_factory=dict)  # recorded in the session file's header
    github: OpenedGitHub | None = None
    room: RoomClient | None = None
    room_name: str = "agent"
    room_approvers: tuple[str, ...] = ()  # `--approver NAME`: peers who may answer proposals from the chat
    agent: RoomAgent | None = None  # a room's trigger answerer, made by `attach`

    @property
    def kind(self) -> str:
        """local, github, github-clone or room."""
        return self.workspace.kind

    @property
    def label(self) -> str:
        """What the user sees the target called (a folder, `github:owner/repo`, a room)."""
        return self.workspace.label

    def registry(self) -> ToolRegistry | None:
        """A fresh tool registry for a session on this target (None: the default tools)."""
        return self.github.registry() if self.github is not None else None

    def attach(self, session: AgentSession) -> None:
        """Bind a session (a new one after /clear or /resume too) to what the target keeps:
        GitHub state recorded in the session and rate-limit waits in its events; a room's
        triggers answered by it (run `target.agent.run()` in a task the front end owns)."""
        if self.github is not None:
            self.github.attach(session)
        if self.room is None:
            return
        if self.agent is None:
            from agent.session.room import RoomAgent
            from agent.workspaces.room import RoomWorkspace

            assert isinstance(self.workspace, RoomWorkspace)  # a room target's workspace is the room
            self.agent = RoomAgent(self.room, self.workspace, session, session.emit, self.room_name,
                                   self.room_approvers)
        else:
            self.agent.bind(session, session.emit)

    async def close(self) -> None:
        """Leave the room and release the workspace (safe after the session closed it)."""
        if self.room is not None:
            await self.room.leave()
        await self.workspace.close()


def open_login_page(prompt: LoginPrompt) -> None:
    """Try to open an OCT server's login page; front ends show the address either way."""
    threading.Thread(target=webbrowser.open, args=(prompt.url,), name="open-login", daemon=True).start()


async def open_target(spec: TargetSpec, config: Any = None, *, emit: Emit | None = None,
                      progress: ProgressFn | None = None, notice: Callable[[str], None] | None = None,
                      on_login: Callable[[LoginPrompt], None] | None = open_login_page,
                      watch_room: Callable[[RoomClient], None] | None = None,
                      store: Any = None, settings: dict[str, Any] | None = None) -> Target:
    """Open what `spec` names (TargetError with message and hint when it cannot be opened).

    `config` (the merged Config) is needed for GitHub: its token and API address. `emit` gets
    the events that happen while opening (GitHub rate-limit waits, a room's state and people);
    `progress` gets (stage, done, total) of a clone, or `notice` gets it as occasional lines.
    `on_login` is told a room server's login address; `watch_room` gets the room's client
    before it joins (a status pane follows it). `store` is the SessionStore (tests), and
    `settings` overrides GitHub ClientSettings fields (tests).
    """
    if spec.room:
        return await _open_room(spec, emit, on_login, watch_room)
    if spec.github:
        if progress is None and notice is not None:
            from agent.session.github import progress_lines

            progress = progress_lines(notice)
        return await _open_github(spec, config, emit, progress, store, settings)
    if spec.clone or spec.issue is not None:
        raise TargetError("--clone and --issue need --github OWNER/REPO",
                          "add --github OWNER/REPO, or leave out --clone and --issue")
    return _open_local(spec, store)


def recorded_repository(ref: str, store: Any = None) -> tuple[str, bool] | None:
    """The GitHub repository the session `ref` names was last on, and whether through a clone
    (None: not a GitHub session, or no such session: opening it says so)."""
    from agent.session.record import SessionError, SessionStore, load

    try:
        state = load((store or SessionStore()).resolve(ref)).state
    except (SessionError, OSError):
        return None
    # agent/workspaces/github.py CLONE_KEY and STATE_KEY (not imported: a local resume needs none of it)
    for key, clone in (("github.clone", True), ("github", False)):
        pointer = state.get(key)
        if isinstance(pointer, dict) and isinstance(pointer.get("repository"), str):
            return pointer["repository"], clone
    return None


def _open_local(spec: TargetSpec, store: Any) -> Target:
    from agent.workspaces.base import WorkspaceError
    from agent.workspaces.local import LocalWorkspace

    path = spec.workspace or _resumed_root(spec, store) or "."
    try:
        workspace = LocalWorkspace(path)
    except WorkspaceError as exc:
        raise TargetError(f"--workspace: {exc}", "start coder-tui on a folder you can read",
                          reason=str(exc)) from None
    return Target(workspace, prompt=spec.prompt)


def _resumed_root(spec: TargetSpec, store: Any) -> str | None:
    """`--resume ID` without a folder continues in the session's own folder."""
    from agent.session.listing import summary_of
    from agent.session.record import SessionError, SessionStore

    if not spec.resume or spec.workspace or spec.resume == "last":
        return None
    try:
        summary = summary_of((store or SessionStore()).resolve(spec.resume))
    except SessionError as exc:
        raise TargetError(f"--resume: {exc}", RESUME_HINT, reason=str(exc)) from None
    return summary.root if summary else None


async def _open_github(spec: TargetSpec, config: Any, emit: Emit | None, progress: ProgressFn | None,
                       store: Any, settings: dict[str, Any] | None) -> Target:
    from agent.github.errors import GitHubError
    from agent.session.github import GitHubRequest, open_github
    from agent.session.record import SessionError

    if config is None and spec.recorded:  # the front end opened a local folder: the user's config has the token
        config = _user_config()
    if config is None:
        raise ValueError("opening a GitHub repository needs the config (its token and API address)")
    request = GitHubRequest(spec.github or "", spec.clone, spec.issue, spec.prompt, spec.resume,
                            token_needed=spec.recorded)
    try:
        opened = await open_github(request, config, emit, progress, store, settings)
    except SessionError as exc:
        raise TargetError(f"--resume: {exc}", RESUME_HINT, reason=str(exc)) from None
    except GitHubError as exc:
        option = "--resume" if spec.recorded else "--github"  # recorded: the user named no repository
        raise TargetError(f"{option}: {exc}", "fix the repository or token, and start again",
                          reason=str(exc)) from None
    return Target(opened.workspace, prompt=opened.prompt, github=opened)


def _user_config() -> Any:
    from agent.config import ConfigError, load_config

    try:
        return load_config(None)
    except ConfigError as exc:
        raise TargetError(f"--resume: {exc}", "fix the user config, and start again", reason=str(exc)) from None


async def _open_room(spec: TargetSpec, emit: Emit | None, on_login: Callable[[LoginPrompt], None] | None,
                     watch_room: Callable[[RoomClient], None] | None) -> Target:
    from agent.oct.client import RoomClient, RoomOptions
    from agent.oct.crypto import start_key_pair
    from agent.oct.errors import OctError
    from agent.oct.roomevents import room_events
    from agent.workspaces.room import RoomWorkspace

    room = spec.room or ""
    keys = start_key_pair()  # the 4096-bit key is generated while we log in and wait for the host
    client = RoomClient(RoomOptions(room_id=room, server=spec.server, name=spec.name, email=spec.email,
                                    on_web_login=on_login), keys)
    if emit is not None:
        room_events(client, emit)
    if watch_room is not None:
        watch_room(client)
    try:
        await client.join()
    except OctError as exc:
        await client.leave()
        raise TargetError(f"could not join room {room}: {exc.message}",
                          "check the room id and --server, and start again",
                          reason=exc.message, usage=False) from None
    return Target(RoomWorkspace(client), prompt=spec.prompt, meta={"room": room, "server": spec.server},
                  room=client, room_name=spec.name, room_approvers=spec.approvers)
