"""`coder-tui acp` driven by the official TypeScript ACP SDK (tests/interop/acp_client.mjs).

The Node client starts `coder-tui acp` as its agent process, with isolated user folders and the
scripted model; the test sends it JSON commands (requests, notifications, editor buffers,
permission answers) and reads what it saw (every session update, permission request and file
access) as JSON lines.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_KEY, cli, cli_env
from tests.fakellm import FakeLLM

INTEROP = Path(__file__).resolve().parent.parent / "interop"
Predicate = Callable[[dict[str, Any]], bool]


class AcpClient:
    def __init__(self, home: Path, llm: FakeLLM, *flags: str, runtime: Path | None = None) -> None:
        runtime = runtime or unusable_runtime(home)
        self.agent = {"command": cli()[0], "args": [*cli()[1:], "acp", "--model", llm.model, "--api-base", llm.url,
                                                    "--api-key", TEST_KEY, *flags],
                      "env": cli_env(home, XDG_RUNTIME_DIR=str(runtime)), "cwd": str(home)}
        self.seen: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._stderr: list[str] = []
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> AcpClient:
        if shutil.which("node") is None:
            pytest.fail("Node.js is not installed; the ACP tests need it (Node 20)")
        if not (INTEROP / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
            pytest.fail("tests/interop/node_modules is missing: run `npm ci --prefix tests/interop`")
        self.proc = await asyncio.create_subprocess_exec(
            "node", str(INTEROP / "acp_client.mjs"), json.dumps(self.agent), cwd=str(INTEROP),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        asyncio.create_task(self._read())
        asyncio.create_task(self._read_stderr())
        return self

    async def _read(self) -> None:
        assert self.proc and self.proc.stdout
        async for line in self.proc.stdout:
            if line.strip():
                async with self._changed:
                    self.seen.append(json.loads(line))
                    self._changed.notify_all()
        async with self._changed:
            self.seen.append({"event": "client_exit"})
            self._changed.notify_all()

    async def _read_stderr(self) -> None:
        assert self.proc and self.proc.stderr
        async for line in self.proc.stderr:
            self._stderr.append(line.decode(errors="replace").rstrip())

    def stderr(self) -> str:
        return "\n".join(self._stderr[-40:])

    def send(self, **command: Any) -> None:
        assert self.proc and self.proc.stdin
        self.proc.stdin.write((json.dumps(command) + "\n").encode())

    async def wait_for(self, predicate: Predicate, timeout: float = 60.0, start: int = 0) -> dict[str, Any]:
        """The first event from index `start` on that meets predicate (waits for it to come)."""
        async def found() -> dict[str, Any]:
            async with self._changed:
                while True:
                    for event in self.seen[start:]:
                        if predicate(event):
                            return event
                    if self.seen and self.seen[-1].get("event") == "client_exit":
                        raise AssertionError(f"the client exited; stderr:\n{self.stderr()}")
                    await self._changed.wait()
        try:
            return await asyncio.wait_for(found(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"no matching event within {timeout} s; last events: {self.seen[-8:]}\n"
                                 f"stderr:\n{self.stderr()}") from None

    def request_nowait(self, method: str, params: dict[str, Any]) -> int:
        request_id = next(self._ids)
        self.send(cmd="request", id=request_id, method=method, params=params)
        return request_id

    async def reply(self, request_id: int, timeout: float = 60.0) -> dict[str, Any]:
        return await self.wait_for(lambda e: e.get("event") == "reply" and e.get("id") == request_id, timeout)

    async def request(self, method: str, params: dict[str, Any], timeout: float = 60.0) -> Any:
        reply = await self.reply(self.request_nowait(method, params), timeout)
        if not reply["ok"]:
            raise AssertionError(f"{method} failed: {reply['error']}\nstderr:\n{self.stderr()}")
        return reply["result"]

    async def initialize(self, fs: bool = True) -> Any:
        capabilities = {"fs": {"readTextFile": fs, "writeTextFile": fs}}
        return await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})

    def updates(self, session_id: str, kind: str | None = None, start: int = 0) -> list[dict[str, Any]]:
        return [e["update"] for e in self.seen[start:] if e.get("event") == "update" and e["sessionId"] == session_id
                and (kind is None or e["update"]["sessionUpdate"] == kind)]

    async def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.returncode is None:
            self.send(cmd="close")
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


def unusable_runtime(under: Path) -> Path:
    """A runtime folder where no session host can be used (its folder is a file): `session/load`
    then works in-process, as it does when the host cannot start."""
    folder = under / "no-host-runtime"
    folder.mkdir(exist_ok=True)
    (folder / "coder-tui").write_text("not a folder\n")
    return folder


@pytest.fixture
def no_host(tmp_path: Path) -> Path:
    return unusable_runtime(tmp_path)


@pytest.fixture
async def acp_client(isolated_home: Path, fake_llm: FakeLLM, no_host: Path) -> AsyncIterator[Callable[..., Any]]:
    """`start(*flags, runtime=FOLDER)`: an ACP client and its agent; the session host is the one of
    `runtime` (tests/host/conftest.py `runtime_dir`), by default none can be used."""
    clients: list[AcpClient] = []

    async def start(*flags: str, runtime: Path | None = None) -> AcpClient:
        client = await AcpClient(isolated_home, fake_llm, *flags, runtime=runtime or no_host).start()
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.stop()
        print("client events (shown when a test fails):", *client.seen[-30:], "stderr:", client.stderr(), sep="\n  ")
