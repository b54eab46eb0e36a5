"""Small commands: `coder-tui undo` and `coder-tui sessions`."""

from __future__ import annotations

import sys
import time
from typing import Any

from agent.checkpoints import CheckpointError, Checkpoints
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
        restored, saved = checkpoints.restore_sync(options.checkpoint)
    except CheckpointError as exc:
        print(f"coder-tui undo: {exc}", file=sys.stderr)
        return 1
    print(f"restored checkpoint {restored.id} ({line(restored.label)})")
    print(f"the state before was saved as {saved.id}: `coder-tui undo {saved.id}` goes back to it")
    return 0


def list_sessions(options: Any) -> int:
    sessions = SessionStore().list()[: options.limit]
    if not sessions:
        print("no sessions recorded yet")
        return 0
    for s in sessions:
        prompt = " ".join(s.first_prompt.split())
        prompt = prompt if len(prompt) <= 60 else prompt[:59] + "…"
        print(f"{s.id}  {_when(s.created)}  {line(s.workspace)}  {line(prompt)}")  # a prompt may be an issue's text
    return 0
