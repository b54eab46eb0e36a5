"""Both session handles on the same footing: `LocalHandle` (the session in the test's process) and
`HostedHandle` (a real `coder-tui host` process on the test's own socket), the model the scripted
server (tests/fakellm.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agent.client.commands import Note
from agent.client.handle import SessionHandle
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM
from tests.host.conftest import runtime_dir, start_host, ws  # noqa: F401 - fixtures

Opener = Callable[..., Any]


class Watcher:
    """Every item a handle sends from now on, kept; `until` waits for one (no sleeps)."""

    def __init__(self, handle: SessionHandle) -> None:
        self.items: list[Any] = []
        self._changed = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._read(handle))

    async def _read(self, handle: SessionHandle) -> None:
        async for item in handle.events():
            self.items.append(item)
            self._changed.set()

    async def until(self, kind: str, timeout: float = 60, **match: Any) -> Any:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for item in self.items[seen:]:
                if _kind(item) == kind and all(_field(item, k) == v for k, v in match.items()):
                    return item
            seen = len(self.items)
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), max(0.1, deadline - time.monotonic()))

    def kinds(self) -> list[str]:
        return [_kind(item) for item in self.items]

    def stop(self) -> None:
        self._task.cancel()


def _kind(item: Any) -> str:
    return item.type


def _field(item: Any, name: str) -> Any:
    return item.data.get(name) if isinstance(item, Note) else getattr(item, name, None)


def text_of(items: list[Any]) -> str:
    return "".join(item.text for item in items if getattr(item, "type", None) == "text_delta")


@pytest.fixture(params=["local", "hosted"])
async def open_handle(request: pytest.FixtureRequest, fake_llm: FakeLLM, ws: Path) -> Any:  # noqa: F811
    """open_handle(mode=, session=, name=) -> a handle of the parametrised kind; `open_handle.kind`."""
    opened: list[SessionHandle] = []
    host = request.getfixturevalue("start_host")() if request.param == "hosted" else None

    async def open_(mode: str = "ask", session: str = "new", name: str = "test") -> SessionHandle:
        if host is not None:
            from agent.client.hosted import HostedHandle
            from agent.host.client import HostClient

            client = await HostClient.connect(host.socket)
            handle: SessionHandle = await HostedHandle.open(client, session, name, host.options(fake_llm, ws, mode))
        else:
            handle = local_handle(fake_llm, ws, mode, None if session == "new" else session, name)
        opened.append(handle)
        return handle

    open_.kind = request.param  # type: ignore[attr-defined]
    open_.host = host  # type: ignore[attr-defined]
    yield open_
    for handle in reversed(opened):
        await handle.close()


def local_handle(llm: FakeLLM, root: Path, mode: str, resume: str | None, name: str) -> SessionHandle:
    from agent.client.local import LocalHandle
    from agent.config import Config
    from agent.session.target import Target
    from agent.workspaces.local import LocalWorkspace

    config = Config(model=llm.model, api_base=llm.url, api_key=SecretStr(TEST_KEY), mode=mode,  # type: ignore[arg-type]
                    workflow="direct", max_retries=2, retry_base_delay=0.01)
    return LocalHandle.open(Target(LocalWorkspace(root)), config, name=name, resume=resume)
