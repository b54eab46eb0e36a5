"""The workspace / room status pane under the timeline.

Panes only present: the app gathers the facts (git state off the event loop, the room client's
status object, the GitHub repository status) and hands them over. One widget, three renderings:
a local folder, a GitHub repository, a live OCT room.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from tui.pathfmt import home_relative
from tui.theme_vars import PRESENCE_COUNT

if TYPE_CHECKING:
    from rich.table import Table

PHASES = {
    "starting": "starting", "connecting": "connecting…", "logging_in": "logging in…",
    "waiting_for_host": "waiting for the host to admit us…", "joined": "joined",
    "reconnecting": "reconnecting…", "closed": "closed",
}


@dataclass
class LocalInfo:
    path: str
    branch: str | None = None  # None: not a git repository
    changed: int = 0  # files with uncommitted changes
    checkpoints: int = 0
    latest: str | None = None  # the newest checkpoint's label


def _grid() -> Table:
    from rich.table import Table

    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def _row(grid: Table, label: str, value: str | Text, style: str = "") -> None:
    grid.add_row(label, value if isinstance(value, Text) else Text(value, style=style))


def presence_index(peer_id: str) -> int:
    """A stable presence colour slot (1-based) for a peer."""
    import hashlib

    return hashlib.sha1(peer_id.encode("utf-8")).digest()[0] % PRESENCE_COUNT + 1


class WorkspacePane(Static):
    DEFAULT_CSS = Path(__file__).with_name("panes.tcss").read_text(encoding="utf-8")

    def on_mount(self) -> None:
        self.border_title = "Workspace"

    def show_local(self, info: LocalInfo) -> None:
        self.border_title = "Folder"
        grid = _grid()
        _row(grid, "path", home_relative(info.path))
        if info.branch is None:
            _row(grid, "git", "not a git repository")
        else:
            state = "clean" if not info.changed else f"{info.changed} changed file{'s' if info.changed != 1 else ''}"
            _row(grid, "branch", f"{info.branch} · {state}", "" if not info.changed else "bold")
        _row(grid, "undo", f"{info.checkpoints} checkpoint{'s' if info.checkpoints != 1 else ''}")
        if info.latest:
            _row(grid, "latest", info.latest)
        self.update(grid)

    def show_github(self, status: Any, clone: bool) -> None:
        self.border_title = "GitHub" + (" (clone)" if clone else "")
        grid = _grid()
        _row(grid, "repo", status.repository, "bold")
        _row(grid, "ref", status.ref)
        _row(grid, "branch", status.work_branch)
        if status.pull_request:
            _row(grid, "pull", f"#{status.pull_request}")
        staged = status.staged
        _row(grid, "staged", f"{len(staged)} file{'s' if len(staged) != 1 else ''}" + (" (/pr publishes)" if staged else ""))
        marks = {"added": "A", "modified": "M", "deleted": "D"}
        for item in staged[:8]:
            _row(grid, "", f"{marks.get(item.status, '?')} {item.path}")
        if len(staged) > 8:
            _row(grid, "", f"… {len(staged) - 8} more", "dim")
        if status.rate is not None:
            reset = status.rate.reset.strftime("%H:%M") if status.rate.reset else "?"
            _row(grid, "rate", f"{status.rate.remaining}/{status.rate.limit} left (resets {reset})")
        self.update(grid)

    def show_room(self, status: Any, failed: str | None = None) -> None:
        """The room as the client sees it; `failed`: why joining failed (nothing else is shown then)."""
        self.border_title = "Room"
        colours = getattr(self.app, "theme_variables", {}) or {}
        grid = _grid()
        _row(grid, "server", status.server)
        _row(grid, "room", status.room_id, "bold")
        if failed is not None:
            _row(grid, "state", f"could not join · {failed}", "bold")
            _row(grid, "next", "check the room id and --server, then start again (Ctrl+Q quits)")
            self.update(grid)
            return
        phase = PHASES.get(status.phase, status.phase)
        _row(grid, "state", phase + (f" · {status.message}" if status.message and status.phase != "joined" else ""),
             "bold" if status.phase != "joined" else "")
        if status.login_url and status.phase == "logging_in":
            _row(grid, "log in", Text(status.login_url, style=f"underline link {status.login_url}"))
        _row(grid, "you", status.name + (f" ({status.peer_id[:8]})" if status.peer_id else ""))
        if status.host is not None:
            _row(grid, "host", _peer(status.host, colours))
        for peer in status.peers.values():
            _row(grid, "peer", _peer(peer, colours))
        _row(grid, "following", status.followed or "—")
        _row(grid, "access", "read-only (edits refused)" if status.readonly else "read and write")
        _queue(grid, status)
        self.update(grid)


def _peer(peer: Any, colours: dict[str, str]) -> Text:
    text = Text("● ", style=colours.get(f"presence-{presence_index(peer.id)}", ""))
    text.append(peer.name or "(no name)")
    if peer.path:
        text.append(f"  {peer.path}", style="dim")
    return text


def _queue(grid: Table, status: Any) -> None:
    if status.working_on:
        _row(grid, "working", status.working_on, "bold")
    if status.queue:
        _row(grid, "queued", f"{len(status.queue)}")
        for label in status.queue[:5]:
            _row(grid, "", f"· {label}")
    if status.last_trigger and not status.working_on:
        _row(grid, "last", status.last_trigger)


def local_info(root: str, checkpoints: Any) -> LocalInfo:
    """Git branch and dirty state (from the user's repository, read-only) and checkpoints.

    Runs git as a subprocess: call it off the event loop.
    """
    from agent import gitsafe

    info = LocalInfo(path=root)
    branch = gitsafe.run(root, "branch", "--show-current", timeout=5)
    if branch is not None:
        info.branch = branch or "(detached HEAD)"
        status = gitsafe.run(root, "status", "--porcelain", "--untracked-files=normal") or ""
        info.changed = len([line for line in status.splitlines() if line.strip()])
    if checkpoints is not None:
        try:
            items = checkpoints.list()
        except Exception:  # noqa: BLE001 - a broken shadow repo shows as no checkpoints
            items = []
        info.checkpoints = len(items)
        if items:
            stamp = time.strftime("%H:%M", time.localtime(items[0].created))
            info.latest = f"{stamp} {items[0].label}"
    return info
