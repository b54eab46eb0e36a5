"""Driving the Node scripts in tests/interop (published OCT packages) from Python tests.

Both scripts read one JSON command per line and answer with JSON lines. They need
`npm ci --prefix tests/interop`; without it the tests fail and say so (they do not skip).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

INTEROP = Path(__file__).resolve().parent.parent / "interop"
INSTALL_HINT = "run `npm ci --prefix tests/interop` (installs the published OCT packages the interop tests use)"


def require_node_modules() -> None:
    if shutil.which("node") is None:
        pytest.fail("Node.js is not installed; the OCT interop tests need it (Node 20)")
    if not (INTEROP / "node_modules" / "open-collaboration-protocol").is_dir():
        pytest.fail(f"tests/interop/node_modules is missing: {INSTALL_HINT}")


class NodeProcess:
    """A Node script speaking JSON lines over stdin/stdout."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.proc: asyncio.subprocess.Process | None = None
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seen: list[dict[str, Any]] = []
        self._reader: asyncio.Task[None] | None = None
        self._stderr: list[str] = []

    async def start(self) -> NodeProcess:
        require_node_modules()
        self.proc = await asyncio.create_subprocess_exec(
            "node", str(INTEROP / self.script), cwd=str(INTEROP),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        self._reader = asyncio.create_task(self._read())
        asyncio.create_task(self._read_stderr())
        return self

    async def _read(self) -> None:
        assert self.proc and self.proc.stdout
        async for line in self.proc.stdout:
            text = line.decode().strip()
            if text:
                event = json.loads(text)
                self.seen.append(event)
                await self.events.put(event)
        await self.events.put({"event": "exit"})

    async def _read_stderr(self) -> None:
        assert self.proc and self.proc.stderr
        async for line in self.proc.stderr:
            self._stderr.append(line.decode(errors="replace").rstrip())

    def send(self, **command: Any) -> None:
        assert self.proc and self.proc.stdin
        self.proc.stdin.write((json.dumps(command) + "\n").encode())

    async def expect(self, *names: str, timeout: float = 45.0) -> dict[str, Any]:
        """The next event whose name is one of names (others are kept in `seen`)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            remaining = end - loop.time()
            if remaining <= 0:
                raise AssertionError(f"no {names} from {self.script} within {timeout} s; stderr: {self.stderr()}")
            try:
                event = await asyncio.wait_for(self.events.get(), remaining)
            except asyncio.TimeoutError:
                continue
            if event.get("event") in names or event.get("ok") is not None and "reply" in names:
                return event
            if event.get("event") in ("error", "exit"):
                raise AssertionError(f"{self.script}: {event}; stderr: {self.stderr()}")

    async def call(self, timeout: float = 60.0, **command: Any) -> dict[str, Any]:
        """Send a command and wait for its reply (the vectors script answers every line)."""
        self.send(**command)
        reply = await self.expect("reply", timeout=timeout)
        if not reply.get("ok"):
            raise AssertionError(f"{self.script} failed: {reply.get('error')}")
        return reply

    def stderr(self) -> str:
        return "\n".join(self._stderr[-20:])

    async def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
        if self._reader:
            self._reader.cancel()


class NodeHost(NodeProcess):
    """The host peer (tests/interop/host.mjs) on a test server."""

    def __init__(self) -> None:
        super().__init__("host.mjs")
        self.room_id = ""

    async def create(self, server: str, **options: Any) -> str:
        self.send(cmd="create", server=server, **options)
        self.room_id = (await self.expect("room"))["roomId"]
        return self.room_id

    async def text(self, path: str) -> str:
        self.send(cmd="text", path=path)
        return (await self.expect("text"))["text"]

    async def wait_text(self, path: str, timeout: float = 45.0, **condition: str) -> str:
        """The host's text once it meets the condition (includes / excludes / equals)."""
        self.send(cmd="wait", path=path, timeout=int(timeout * 1000), **condition)
        event = await self.expect("waited", "wait_timeout", timeout=timeout + 10)
        if event["event"] == "wait_timeout":
            raise AssertionError(f"host text never met {condition}; it is:\n{event['text']}")
        return event["text"]
