"""What a front end on an editor (`coder-tui acp`) asks of a session handle beyond the commands:
the session in this process on the editor's folder, the approval request behind an
`approval_required` event (its changes, for the editor's own diff view), the custom commands to
advertise, a resumed session's record. A session in the host answers None / nothing for each:
the front end then shows what the events carry.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agent.approval import ApprovalRequest, Decision, QueueApprover
from agent.client.handle import SessionHandle
from agent.client.local import LocalHandle

if TYPE_CHECKING:
    from agent.config import Config
    from agent.session.target import Target
    from agent.workspaces.base import Workspace

_approvers: weakref.WeakKeyDictionary[LocalHandle, KeepingApprover] = weakref.WeakKeyDictionary()


class KeepingApprover(QueueApprover):
    """A QueueApprover that keeps each waiting request (its changes: the diffs an editor shows)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: dict[str, ApprovalRequest] = {}

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests[request.approval_id] = request
        try:
            return await super().decide(request)
        finally:
            self.requests.pop(request.approval_id, None)


def open_local(target: Target, config: Config, *, name: str, resume: str | None = None) -> LocalHandle:
    """A session in this process on `target` whose approval requests stay readable while they wait
    (SessionError, ProfileError as `open_session` raises them)."""
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts

    handle, approver = LocalHandle(name, target), KeepingApprover()
    handle.bind(open_session(target, config, SessionPorts(approver, handle.sink, None), resume=resume))
    _approvers[handle] = approver
    return handle


def approval_request(handle: SessionHandle, approval_id: str) -> ApprovalRequest | None:
    """The request behind a waiting approval of a session opened by `open_local` (else None)."""
    approver = _approvers.get(handle) if isinstance(handle, LocalHandle) else None
    return approver.requests.get(approval_id) if approver is not None else None


def custom_commands(handle: SessionHandle) -> Iterable[Any]:
    """The session's custom commands (agent/custom/commands.py) when it runs in this process."""
    if not isinstance(handle, LocalHandle):
        return ()
    return handle.session.agent.input.commands.commands.values()


def restored(handle: SessionHandle) -> Any:
    """A resumed session's record (messages and events) when it runs in this process, else None."""
    return handle.session.restored if isinstance(handle, LocalHandle) else None


def tool_kind(handle: SessionHandle, name: str) -> str | None:
    """A tool's approval kind from the session's registry (this process), else None."""
    if not isinstance(handle, LocalHandle):
        return None
    tool = handle.session.registry.get(name)
    return tool.kind if tool is not None else None


def check_images(handle: SessionHandle) -> None:
    """ImageError when the session's model takes no images (this process; the host refuses them)."""
    if isinstance(handle, LocalHandle):
        handle.session.check_images()


def workspace(handle: SessionHandle) -> Workspace | None:
    """The session's workspace when it runs in this process (an editor's buffers included), else None."""
    return handle.session.workspace if isinstance(handle, LocalHandle) else None


def runs_here(handle: SessionHandle) -> bool:
    """Whether the session runs in this process (its only front end: nobody else answers its approvals)."""
    return isinstance(handle, LocalHandle)


def lost(handle: SessionHandle) -> asyncio.Event | None:
    """Set once the session host's connection is gone (a session in the host); None in this process."""
    event = getattr(handle, "lost", None)  # HostedHandle's (imported only when the host is used)
    return event if isinstance(event, asyncio.Event) else None
