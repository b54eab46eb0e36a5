"""Language servers for the agent (diagnostics after each edit, definitions, references, symbols,
hover, rename): see manager.py. Only folders on disk are served; `for_session` says which."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.config import Config
    from agent.lsp.manager import LspManager
    from agent.workspaces.base import Workspace

OFF = ("off", "0", "false", "no")  # CODER_TUI_LSP: language servers turned off for this process
# each workspace's servers, for the tools that ask whether they can serve it (they see the workspace only)
_MANAGERS: weakref.WeakKeyDictionary[Any, LspManager] = weakref.WeakKeyDictionary()


def manager_of(workspace: Workspace) -> LspManager | None:
    return _MANAGERS.get(workspace)


def for_session(config: Config, workspace: Workspace, emit: Callable[[Any], None]) -> LspManager | None:
    """The session's language servers (none started yet), or None for a workspace that has no
    folder on disk (a room, GitHub without a clone: servers read the project from disk) and when
    CODER_TUI_LSP=off."""
    if workspace.root is None or os.environ.get("CODER_TUI_LSP", "").lower() in OFF:
        return None
    from agent.lsp.manager import LspManager

    manager = _MANAGERS[workspace] = LspManager(workspace, workspace.root, config.lsp, config.workspace_trusted, emit)
    return manager
