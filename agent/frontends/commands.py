"""Small commands: `coder-tui undo` and `coder-tui sessions` (with the session host's live sessions)."""

from __future__ import annotations

import sys
import time
from typing import Any

from agent.checkpoints import CheckpointError, Checkpoints
from agent.hostplace import HostRecord, running_hosts, socket_path
from agent.session.record import SessionStore
from agent.textsafe import line


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def undo(options: Any) -> int:
    from agent.workspaces.base import WorkspaceError
    from agent.workspaces.local import LocalWorkspace

    try:
        workspace = LocalWorkspace(options.workspace)
    except WorkspaceError as exc:
        print(f"coder-tui undo: error: --workspace: {exc}", file=sys.stderr)
        return 2
    checkpoints = Checkpoints(workspace.root)
    try:
        if options.list:
            items = checkpoints.list()
            if not items:
                print(f"no checkpoints for {workspace.root}")
            for item in items:
                note = "  (restore point)" if item.restore_point else ""
                print(f"{item.id}  {_when(item.created)}  {line(item.label)}{note}")
            return 0
        untouched = [] if options.include_untracked else checkpoints.untouched(options.checkpoint)
        include = options.include_untracked or (bool(untouched) and _ask_untouched(untouched))
        restored, saved = checkpoints.restore_sync(options.checkpoint, include)
    except CheckpointError as exc:
        print(f"coder-tui undo: {exc}", file=sys.stderr)
        return 1
    print(f"restored checkpoint {restored.id} ({line(restored.label)})")
    if untouched and not include:
        print(f"kept {len(untouched)} file(s) the agent never touched: {line(_names(untouched))} "
              f"(`coder-tui undo {restored.id} --include-untracked` restores them too)")
    print(f"the state before was saved as {saved.id}: `coder-tui undo {saved.id}` goes back to it")
    from agent.session.undo import reopen_in_records

    for note in reopen_in_records(checkpoints, restored, saved, include):
        print(note)
    return 0


def _names(paths: list[str], shown: int = 10) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def _ask_untouched(paths: list[str]) -> bool:
    """On a terminal, whether to restore the files the agent never touched too (default: no)."""
    if not sys.stdin.isatty():
        return False
    print(f"these files changed since the checkpoint, but not by the agent: {_names(paths, 30)}")
    try:
        answer = input("restore them too (files you made are deleted, your edits undone)? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def list_sessions(options: Any) -> int:
    """`coder-tui sessions` (a reader that leaves early, `| head -1`, is tui/cli.py's to handle)."""
    import asyncio

    hosts = asyncio.run(_hosts())
    ours = next((rows for record, rows in hosts if record.socket == socket_path()), None)
    if getattr(options, "live", False):
        return _live_view(ours)
    live = {row["session_id"]: row for row in ours or []}  # this environment's session host's, if it runs
    sessions = SessionStore().list()[: options.limit]
    if not sessions and not live:
        print("no sessions recorded yet")
    listed = {s.id for s in sessions}
    for row in live.values():  # live in the host but not recorded yet (no prompt sent)
        if row["session_id"] not in listed:
            print(f"{row['session_id']}  {'':16}  {line(row['workspace'])}  {_live(row)}")
    for s, depth in _tree(sessions):
        prompt = " ".join(s.first_prompt.split())
        prompt = prompt if len(prompt) <= 60 else prompt[:59] + "…"
        state = f"  {_live(live[s.id])}" if s.id in live else ""
        # a prompt may be an issue's text; a subagent's session is listed under its parent's
        print(f"{'  └ ' * depth}{s.id}  {_when(s.created)}  {line(s.workspace)}  {line(prompt)}{state}")
    for record, rows in hosts:
        print(_host_line(record, rows))
    return 0


def _tree(sessions: list[Any]) -> list[tuple[Any, int]]:
    """The sessions newest first, each subagent's right under its parent (oldest child first);
    a child whose parent is not listed stands on its own."""
    listed = {s.id for s in sessions}
    children: dict[str, list[Any]] = {}
    for s in sessions:
        if s.parent in listed:
            children.setdefault(s.parent, []).append(s)
    ordered: list[tuple[Any, int]] = []

    def add(s: Any, depth: int) -> None:
        ordered.append((s, depth))
        for child in sorted(children.get(s.id, []), key=lambda c: c.created):
            add(child, depth + 1)

    for s in sessions:
        if s.parent not in listed:
            add(s, 0)
    return ordered


def _live_view(rows: list[dict[str, Any]] | None) -> int:
    """`sessions --live`: the host's live sessions and their subagents, then the fleet's unfinished
    batches (when a broker is configured): which waits for you."""
    from agent.frontends.fleetlive import fleet_live_lines
    from agent.subagents.live import live_lines

    if rows is None:
        print("no session host runs: live sessions are those of the host (see `coder-tui host`)")
    elif not rows:
        print("the session host has no live sessions")
    for text in [*live_lines(rows or []), *fleet_live_lines()]:
        print(text)
    return 0


async def _hosts() -> list[tuple[HostRecord, list[dict[str, Any]] | None]]:
    """Each running host of this user with its live sessions (None: it did not answer); never starts one."""
    from agent.client.hosted import live_sessions

    return [(record, await live_sessions(record.socket)) for record in running_hosts()]


def _host_line(record: HostRecord, live: list[dict[str, Any]] | None) -> str:
    """Which host serves what: its folders, pid and live sessions; whose it is."""
    if record.socket == socket_path():
        whose = "this environment's"
    elif record.same_folders():
        whose = "same folders, other keys or settings"
    else:
        whose = "another HOME"
    sessions = f"{len(live)} live session(s)" if live is not None else "not answering"
    return (f"host pid {record.pid} ({whose}): data {line(record.data)}, config {line(record.config)}; "
            f"{sessions}; since {_when(record.started)}")


def _live(row: dict[str, Any]) -> str:
    """How a session the host owns is doing: running or idle, and who is attached."""
    state = "running" if row["running"] else "idle"
    if row["pending_approvals"]:
        state += f", {len(row['pending_approvals'])} approval(s) waiting"
    attached = ", ".join(line(name) for name in row["clients"]) or "nobody"
    return f"[live in the host: {state}; attached: {attached}]"


def trust(options: Any) -> int:
    """`coder-tui trust [DIR]`, `--list`, `--revoke DIR`: the user's answers per folder."""
    import os
    from pathlib import Path

    from agent.config import ConfigError
    from agent.workspace_input import trust as store

    try:
        if options.list:
            rows = store.listing()
            for folder, state in rows:
                print(f"{folder}  {state}")
            if not rows:
                print("no folder remembered (`coder-tui trust DIR` trusts one)")
            return 0
        folder = Path(options.folder).expanduser()
        if options.revoke:
            if not store.revoke(folder):
                print(f"coder-tui trust: nothing remembered for {os.path.realpath(folder)}", file=sys.stderr)
                return 1
            print(f"forgot {os.path.realpath(folder)}: its own files are untrusted again")
            return 0
        if not folder.is_dir():
            print(f"coder-tui trust: error: {options.folder!r} is not a folder", file=sys.stderr)
            return 2
        new = store.unconfirmed(folder)
        where = store.remember(folder, True)
    except ConfigError as exc:
        print(f"coder-tui trust: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout's reader left: tui/cli.py ends quietly
        raise
    except OSError as exc:  # the folder cannot be opened to read its identity
        print(f"coder-tui trust: error: cannot open {options.folder}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"trusted {os.path.realpath(folder)} (remembered in {where}); "
          "`coder-tui trust --revoke DIR` forgets it")
    if new:  # what this confirms: a later change to any of it waits for you to confirm it again
        from agent.textsafe import line

        print("it may now use:" + "".join(f"\n  {line(item)}" for item in new))
    return 0
